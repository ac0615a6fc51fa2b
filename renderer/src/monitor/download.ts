/**
 * Save text as a file from the renderer: a Blob behind a temporary link with `download`. The browser
 * shell saves it to the downloads folder; Electron's session shows its save dialog for the same link.
 */
export function downloadText(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked after the click has been handled (the download holds its own reference by then).
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
