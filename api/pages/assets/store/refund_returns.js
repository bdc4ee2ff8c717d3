// The returns page's receive button posts the return's lines, as the
// merchant set them, to the JSON API with the page's session; the API's
// answer (or its error, in the page's language) is shown, and the page
// reloads after a receipt.

import { call, storeAPI, words } from "./api.js";

for (const article of document.querySelectorAll("article.return")) {
  const button = article.querySelector("button.receive");
  if (!button) continue;
  const result = article.querySelector(".result");
  button.addEventListener("click", async () => {
    button.disabled = true;
    const lines = [...article.querySelectorAll("tr.line")].map((row) => {
      const line = {
        line_id: row.dataset.lineId,
        received_quantity: Number(row.querySelector("input.received").value),
        restock: row.querySelector("input.restock").checked,
      };
      const location = row.querySelector("select.location")?.value;
      if (line.restock && location) line.location_id = location;
      return line;
    });
    const r = await call("POST", storeAPI(`/returns/${article.dataset.returnId}/receive`), { body: { lines } });
    result.dataset.ok = String(r.ok);
    if (r.ok) {
      result.textContent = words.received_ok;
      setTimeout(() => location.reload(), 800);
      return;
    }
    result.textContent = r.error.message;
    result.classList.add("error");
    button.disabled = false;
  });
}
