import { useEffect } from 'react';
import { studioClient } from '../store/actions';
import { datasetChoiceOf, inspectionKey } from '../store/dataChoice';
import { errorText } from '../store/errorText';
import { useStudio } from '../store/studioStore';

/** Typing pauses this long before the Node side looks at the data again. */
const DEBOUNCE_MS = 400;

/**
 * Inspect the dataset whenever its fields, the loss or the model change (debounced): the answer is kept
 * in the choice with the key it answers, so Train and the section only trust an answer to the fields
 * as they are now, and an answer that comes back after a newer edit is dropped.
 */
export function useDatasetInspection(): void {
  const data = useStudio((s) => s.data);
  const model = useStudio((s) => s.model?.source?.modelFile ?? s.modelName ?? '');
  const fields = data.kind === 'dataset' ? datasetChoiceOf(data) : undefined;
  const key = fields && 'choice' in fields && model ? inspectionKey(fields.choice, data.loss, model) : undefined;
  const current = data.inspected?.key;
  useEffect(() => {
    if (!key || key === current || !fields || !('choice' in fields)) return;
    const request = { model, ...(data.loss ? { loss: data.loss } : {}), choice: fields.choice };
    const timer = setTimeout(() => {
      const client = studioClient();
      if (!client) return;
      const store = (answer: { inspection?: Awaited<ReturnType<typeof client.inspectDataset>>; error?: string }) => {
        const now = useStudio.getState();
        const nowFields = now.data.kind === 'dataset' ? datasetChoiceOf(now.data) : undefined;
        const nowModel = now.model?.source?.modelFile ?? now.modelName ?? '';
        if (!nowFields || !('choice' in nowFields) || inspectionKey(nowFields.choice, now.data.loss, nowModel) !== key) return;
        now.set({ data: { ...now.data, inspected: { key, ...answer } } });
      };
      client.inspectDataset(request).then((inspection) => store({ inspection }), (error: unknown) => store({ error: errorText(error) }));
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
    // The key stands for the request: fields, loss and model.
  }, [key, current]);
}
