// The words of a JSON API error answer in the page's language: its first
// field's message, else the error's.
export function apiMessage(json, lang) {
  const err = json.error || {};
  const source = (err.fields || [])[0] || err;
  return lang === "ar" ? source.message_ar : source.message;
}
