/** What to show of a thrown value: an Error's message, anything else as text. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
