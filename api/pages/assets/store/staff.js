// The staff page's forms each name an API call (data-method, data-path
// under the store); a form's fields become the JSON body (checkboxes of
// one name an array). The API's answer, or its error in the page's
// language, is shown, and the page reloads after a change.

import { call, storeAPI, words } from "./api.js";

function body(form) {
  const out = {};
  for (const field of form.elements) {
    if (!field.name) continue;
    if (field.type === "checkbox") {
      out[field.name] = out[field.name] || [];
      if (field.checked) out[field.name].push(field.value);
    } else {
      out[field.name] = field.value;
    }
  }
  return out;
}

// The error in the page's language, naming the field it is about.
const message = (error) => (error.field ? error.field + ": " : "") + error.message;

for (const form of document.querySelectorAll("form[data-method]")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (form.dataset.confirm === "remove" && !window.confirm(words.confirm_remove)) return;
    const result = form.closest("section").querySelector(".result") || form.appendChild(document.createElement("span"));
    result.classList.add("result");
    const button = form.querySelector("button");
    button.disabled = true;
    const method = form.dataset.method;
    const r = await call(method, storeAPI(form.dataset.path), { body: method === "DELETE" ? undefined : body(form) });
    result.dataset.ok = String(r.ok);
    result.classList.toggle("error", !r.ok);
    result.textContent = r.ok ? words.done : message(r.error);
    if (r.ok) {
      setTimeout(() => location.reload(), 500);
      return;
    }
    button.disabled = false;
  });
}
