// The console's only script (progressive enhancement; every page works without it):
// buttons with data-copy="<element id>" copy that element's value to the clipboard.
"use strict";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  const text = source.value !== undefined ? source.value : source.textContent;
  const done = () => {
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => { source.select(); });
  } else {
    source.select();
    document.execCommand("copy");
    done();
  }
});
