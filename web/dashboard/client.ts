// The dashboard's only script (bundled by web/dashboard/assets.ts): confirmations before destructive forms,
// secrets selected on focus, copy buttons. Every screen works without it.
document.addEventListener("submit", (e) => {
  const form = e.target as HTMLFormElement;
  const question = form.dataset.confirm;
  if (question && !window.confirm(question)) e.preventDefault();
});
document.addEventListener("focusin", (e) => {
  const el = e.target as HTMLInputElement;
  if (el.classList?.contains("secret")) el.select();
});
document.addEventListener("click", (e) => {
  const button = (e.target as HTMLElement).closest<HTMLButtonElement>("button[data-copy]");
  if (!button) return;
  void navigator.clipboard?.writeText(button.dataset.copy ?? "");
  button.textContent = "Copied";
});
