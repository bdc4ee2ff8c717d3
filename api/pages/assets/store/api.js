// Every call the merchant pages make goes through call(): the session
// cookie, the page's CSRF token (X-CSRF-Token, from its csrf-token meta),
// a new Idempotency-Key on every write, and the answer read as the API's
// envelope, {"success":…,"data":…} or {"success":false,"error":{"code",
// "message","message_ar","request_id","fields"?}}, whose words are shown in
// the page's language. Pages import this file as /assets/store/api.js.

// lang is the page's language, from <html lang>.
export const lang = document.documentElement.lang === "en" ? "en" : "ar";

// words are the words the page's template handed its script
// (<script type="application/json" id="words">), by name.
export const words = JSON.parse(document.getElementById("words")?.textContent || "{}");

const csrf = document.querySelector('meta[name="csrf-token"]')?.content;
const writes = new Set(["POST", "PUT", "PATCH", "DELETE"]);

// storeAPI is a path of the JSON API under the page's store.
export const storeAPI = (path) => `/api/v1/stores/${document.body.dataset.storeId}${path}`;

// call sends one request: body is sent as JSON, or as it is when it is
// FormData; a signal (AbortSignal) lets the caller abort it. It answers
// { ok, status, data, answer, error }: answer is the whole JSON body, data
// its "data", and error (when not ok) the envelope's error in the page's
// language (see apiError).
export async function call(method, path, { body, headers = {}, signal } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json", ...headers }, signal };
  if (csrf) init.headers["X-CSRF-Token"] = csrf;
  if (writes.has(method)) init.headers["Idempotency-Key"] = crypto.randomUUID();
  if (body instanceof FormData) {
    init.body = body;
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const answer = res.status === 204 ? {} : await res.json().catch(() => ({}));
  return { ok: res.ok, status: res.status, data: answer.data, answer, error: res.ok ? null : apiError(answer, res.status) };
}

// apiError reads an error answer: its code, request id and fields, the
// field its first field error names, and the message in the page's
// language (the first field error's, else the error's), or the HTTP status
// when the answer carries none (then code is "").
export function apiError(answer, status) {
  const err = answer.error || {};
  const fields = err.fields || [];
  const source = fields[0] || err;
  return {
    code: err.code || "",
    requestID: err.request_id || "",
    fields,
    field: fields[0]?.field || "",
    message: (lang === "ar" ? source.message_ar : source.message) || String(status),
  };
}

// showError shows an error (apiError) in el, with its code in data-code.
export function showError(el, error) {
  el.textContent = error.message;
  el.dataset.code = error.code;
  el.hidden = false;
}

// fragmentToken is the token a mailed link carries in the URL's fragment
// (#token=…, which no server and no Referer sees), kept under key for the
// tab's session so that signing in or switching language does not lose it;
// the fragment is taken out of the address bar.
export function fragmentToken(key) {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    sessionStorage.setItem(key, fromHash);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return fromHash || sessionStorage.getItem(key);
}
