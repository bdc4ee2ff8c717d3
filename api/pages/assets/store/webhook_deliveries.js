// The deliveries page's buttons call the JSON API with the session, so
// redeliver and recover follow the API's rules; the page then reloads.

import { call, storeAPI, words } from "./api.js";

async function webhookCall(method, path, body) {
  const r = await call(method, storeAPI(`/webhooks/${path}`), { body });
  if (r.ok) return { ok: true, text: method === "POST" ? `${words.queued}: ${r.data.queued}` : words.enabled };
  return { ok: false, text: r.error.message };
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
    answer(await webhookCall("POST", `${webhookID}/recover`, { since }));
  });
  section.querySelector(".enable")?.addEventListener("click", async () => {
    answer(await webhookCall("PATCH", webhookID, { is_active: true }));
  });
  for (const row of section.querySelectorAll("tr.delivery")) {
    row.querySelector(".redeliver")?.addEventListener("click", async (ev) => {
      ev.target.disabled = true;
      answer(await webhookCall("POST", `${webhookID}/deliveries/${row.dataset.deliveryId}/redeliver`, {}));
    });
  }
}
