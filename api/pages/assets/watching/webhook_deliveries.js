// The deliveries page's buttons call the JSON API with the session, so
// redeliver and recover follow the API's rules; the page then reloads.

const storeID = document.body.dataset.storeId;
const lang = document.body.dataset.lang;
const words = JSON.parse(document.getElementById("words").textContent);

async function call(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (method === "POST") headers["Idempotency-Key"] = crypto.randomUUID();
  const res = await fetch(`/api/v1/stores/${storeID}/webhooks/${path}`, {
    method, credentials: "same-origin", headers, body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (res.ok) return { ok: true, text: method === "POST" ? `${words.queued}: ${json.data.queued}` : words.enabled };
  const err = json.error || {};
  return { ok: false, text: (lang === "ar" ? err.message_ar : err.message) || String(res.status) };
}

for (const section of document.querySelectorAll(".subscription")) {
  const webhookID = section.dataset.webhookId;
  const result = section.querySelector(".result");
  const answer = (r) => {
    result.textContent = r.text;
    result.dataset.ok = String(r.ok);
    if (r.ok) setTimeout(() => location.reload(), 1500);
  };
  section.querySelector(".recover").addEventListener("click", async () => {
    const since = new Date(Date.now() - 3 * 24 * 3600 * 1000).toISOString();
    answer(await call("POST", `${webhookID}/recover`, { since }));
  });
  section.querySelector(".enable")?.addEventListener("click", async () => {
    answer(await call("PATCH", webhookID, { is_active: true }));
  });
  for (const row of section.querySelectorAll("tr.delivery")) {
    row.querySelector(".redeliver")?.addEventListener("click", async (ev) => {
      ev.target.disabled = true;
      answer(await call("POST", `${webhookID}/deliveries/${row.dataset.deliveryId}/redeliver`, {}));
    });
  }
}
