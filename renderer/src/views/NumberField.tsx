import { useEffect, useId, useState } from 'react';

export interface NumberFieldProps {
  label: string;
  testId: string;
  value: number;
  min: number;
  max: number;
  step?: number;
  integer?: boolean;
  disabled?: boolean;
  onChange(value: number): void;
}

/** A labelled number input that lets the user type freely and commits only valid values. */
export function NumberField({ label, testId, value, min, max, step = 1, integer = true, disabled, onChange }: NumberFieldProps) {
  const id = useId();
  const [text, setText] = useState(String(value));
  useEffect(() => setText(String(value)), [value]);
  const parsed = Number(text);
  const valid = text.trim() !== '' && Number.isFinite(parsed) && parsed >= min && parsed <= max && (!integer || Number.isInteger(parsed));
  return (
    <div className="field">
      <label className="field__label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        data-testid={testId}
        type="number"
        inputMode={integer ? 'numeric' : 'decimal'}
        min={min}
        max={max}
        step={step}
        value={text}
        disabled={disabled}
        aria-invalid={!valid}
        onChange={(e) => {
          setText(e.target.value);
          const next = Number(e.target.value);
          if (e.target.value.trim() !== '' && Number.isFinite(next) && next >= min && next <= max && (!integer || Number.isInteger(next))) onChange(next);
        }}
        onBlur={() => !valid && setText(String(value))}
      />
    </div>
  );
}
