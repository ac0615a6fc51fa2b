/**
 * One record of a CSV/TSV file split into fields, as RFC 4180 has it and spreadsheet programs write
 * it: a field may be quoted ("…"), a quoted field may hold the delimiter, newlines and "" for a quote.
 */
export function parseRecord(text: string, delimiter: string): string[] {
  const fields: string[] = [];
  let i = 0;
  const n = text.length;
  for (;;) {
    if (text[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) { value += text.slice(i); i = n; break; }
        value += text.slice(i, q);
        if (text[q + 1] === '"') { value += '"'; i = q + 2; continue; }
        i = q + 1;
        break;
      }
      // Anything between the closing quote and the delimiter is kept, as spreadsheets do.
      const end = text.indexOf(delimiter, i);
      value += text.slice(i, end < 0 ? n : end);
      fields.push(value);
      if (end < 0) return fields;
      i = end + delimiter.length;
    } else {
      const end = text.indexOf(delimiter, i);
      fields.push(text.slice(i, end < 0 ? n : end));
      if (end < 0) return fields;
      i = end + delimiter.length;
    }
  }
}
