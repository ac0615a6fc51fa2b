/** A validator's message under its field (the field points at it with aria-describedby). */
export function FieldError({ id, message }: { id: string; message?: string }) {
  if (!message) return null;
  return (
    <span className="field__error" role="alert" id={id} data-testid={`${id}`}>
      {message}
    </span>
  );
}

/** Props that tie an input to its message: aria-invalid and aria-describedby when there is one. */
export function invalidProps(id: string, message?: string): { 'aria-invalid': boolean; 'aria-describedby'?: string } {
  return message ? { 'aria-invalid': true, 'aria-describedby': id } : { 'aria-invalid': false };
}
