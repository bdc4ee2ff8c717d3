// The password reset page. Without a token it asks for the account's email
// and has a link mailed; the mailed link opens it with the token in the
// URL's fragment (#token=…), which no server and no Referer sees, and then
// it sets the new password, which signs this browser in.

import { call, fragmentToken, showError, words } from "./api.js";

const $ = (id) => document.getElementById(id);

const token = fragmentToken("reset_token");

function say(text) {
  $("status").textContent = text;
  $("status").hidden = false;
}

$("request").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("error").hidden = true;
  const r = await call("POST", "/api/v1/auth/password-reset", { body: { email: $("email").value } });
  if (!r.ok) {
    showError($("error"), r.error);
    return;
  }
  $("request").hidden = true;
  say(words.sent);
  document.body.dataset.sent = "true";
});

$("confirm").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("error").hidden = true;
  const r = await call("POST", "/api/v1/auth/password-reset/confirm", { body: { token, password: $("password").value } });
  if (!r.ok) {
    showError($("error"), r.error);
    // A dead link will not come back to life: ask for a new one.
    if (r.error.code === "LINK_INVALID" || r.error.code === "LINK_EXPIRED") {
      sessionStorage.removeItem("reset_token");
      $("confirm").hidden = true;
      $("request").hidden = false;
    }
    return;
  }
  sessionStorage.removeItem("reset_token");
  $("confirm").hidden = true;
  say(words.done);
  const first = r.data.stores[0];
  if (first) {
    $("open-store").href = `/stores/${first.store.id}/staff`;
    $("done").hidden = false;
  }
  document.body.dataset.reset = "true";
});

$(token ? "confirm" : "request").hidden = false;
document.body.dataset.ready = "true";
