// The staff page's forms each name an API call (data-method, data-path
// under the store); a form's fields become the JSON body (checkboxes of
// one name an array). The API's answer, or its error in the page's
// language, is shown, and the page reloads after a change.

import { apiMessage } from "./apierror.js";

const storeID = document.body.dataset.storeId;
const lang = document.body.dataset.lang;
const words = JSON.parse(document.getElementById("words").textContent);

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
function message(json, status) {
  const field = ((json.error || {}).fields || [])[0];
  return (field?.field ? field.field + ": " : "") + (apiMessage(json, lang) || String(status));
}

for (const form of document.querySelectorAll("form[data-method]")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (form.dataset.confirm === "remove" && !window.confirm(words.confirm_remove)) return;
    const result = form.closest("section").querySelector(".result") || form.appendChild(document.createElement("span"));
    result.classList.add("result");
    const button = form.querySelector("button");
    button.disabled = true;
    const method = form.dataset.method;
    const init = { method, credentials: "same-origin", headers: { "Idempotency-Key": crypto.randomUUID() } };
    if (method !== "DELETE") {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body(form));
    }
    const res = await fetch(`/api/v1/stores/${storeID}${form.dataset.path}`, init);
    const json = res.status === 204 ? {} : await res.json().catch(() => ({}));
    result.dataset.ok = String(res.ok);
    result.classList.toggle("error", !res.ok);
    result.textContent = res.ok ? words.done : message(json, res.status);
    if (res.ok) {
      setTimeout(() => location.reload(), 500);
      return;
    }
    button.disabled = false;
  });
}
