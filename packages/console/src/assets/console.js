// Progressive enhancement for the copy buttons only; every other feature works without scripts.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const input = document.getElementById(button.getAttribute('data-copy'));
  if (!input) return;
  let copied = false;
  try {
    await navigator.clipboard.writeText(input.value);
    copied = true;
  } catch {
    input.focus();
    input.select();
    copied = document.execCommand('copy');
  }
  const label = button.dataset.label || button.textContent;
  button.dataset.label = label;
  button.textContent = copied ? 'Copied' : 'Select and copy';
  let status = document.getElementById('copy-status');
  if (!status) {
    status = document.createElement('p');
    status.id = 'copy-status';
    status.className = 'visually-hidden';
    status.setAttribute('role', 'status');
    document.body.append(status);
  }
  status.textContent = copied ? 'Copied to the clipboard.' : 'Copying failed; the text is selected.';
  setTimeout(() => {
    button.textContent = label;
  }, 2500);
});
