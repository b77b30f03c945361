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

// The incoming-webhook editor's live preview: after a pause in typing, the editor's fields
// go to /console/hooks/preview (same origin, with the form's CSRF token), and the answer —
// what the sample payload would become — is shown as text. Without this script the
// Preview button does the same with a page load.
(() => {
  const form = document.getElementById("hook-editor");
  if (!form || !window.fetch) return;
  const target = document.getElementById("preview-body");
  let timer = null;
  const show = (answer) => {
    target.replaceChildren();
    if (answer.ok) {
      const table = document.createElement("table");
      table.className = "kv";
      const body = table.createTBody();
      for (const row of answer.rows) {
        const tr = body.insertRow();
        const th = document.createElement("th");
        th.scope = "row";
        th.textContent = row.label;
        tr.appendChild(th);
        tr.insertCell().textContent = row.value;
      }
      target.appendChild(table);
    } else {
      const list = document.createElement("ul");
      list.className = "error";
      for (const e of answer.errors) {
        const li = document.createElement("li");
        li.textContent = e.path + ": " + e.message;
        list.appendChild(li);
      }
      target.appendChild(list);
    }
  };
  const refresh = () => {
    const data = new URLSearchParams(new FormData(form));
    fetch(form.dataset.preview, { method: "POST", body: data, credentials: "same-origin" })
      .then((r) => (r.ok ? r.json() : null))
      .then((answer) => { if (answer) show(answer); })
      .catch(() => {});
  };
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 300);
  });
})();

// The template editor's live preview: after a pause in typing, the editor's Preview button
// is pressed, which posts the typed template to /console/templates/preview into the
// preview frame (the same request the button makes without this script).
(() => {
  const form = document.getElementById("template-editor");
  if (!form || !form.requestSubmit) return;
  const button = form.querySelector("button[data-preview]");
  if (!button) return;
  let timer = null;
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => form.requestSubmit(button), 600);
  });
})();

// The form builder's preview: as the person types, the builder is posted to
// /console/forms/preview and the answer (the form as a visitor sees it, HTML crmd escaped)
// replaces the preview. Without this script the preview follows each button press.
(() => {
  const form = document.getElementById("builder");
  const preview = document.getElementById("form-preview");
  if (!form || !preview || !window.fetch) return;
  let timer = null;
  const refresh = () => {
    fetch(preview.dataset.preview, { method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin" })
      .then((r) => (r.ok ? r.text() : null))
      .then((html) => { if (html !== null) preview.innerHTML = html; })
      .catch(() => {});
  };
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 300);
  });
  form.addEventListener("change", () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 100);
  });
})();
