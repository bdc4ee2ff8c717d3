// The invitation page: the token is in the URL's fragment (#token=…),
// which no server and no Referer sees. The page keeps it for the tab's
// session (so signing in first, or switching language, does not lose
// it), looks the invitation up and accepts it through the JSON API.

import { call, fragmentToken, showError, words } from "./api.js";

const $ = (id) => document.getElementById(id);

const token = fragmentToken("invitation_token");

async function accept(extra) {
  $("error").hidden = true;
  const r = await call("POST", "/api/v1/staff-invitations/accept", { body: { token, ...extra } });
  if (!r.ok) {
    showError($("error"), r.error);
    return;
  }
  sessionStorage.removeItem("invitation_token");
  $("invitation").hidden = true;
  $("status").textContent = words.accepted;
  $("status").hidden = false;
  $("open-store").href = `/stores/${r.data.store.id}/staff`;
  $("done").hidden = false;
  document.body.dataset.accepted = "true";
}

async function start() {
  if (!token) {
    $("status").textContent = words.no_token;
    return;
  }
  const r = await call("POST", "/api/v1/staff-invitations/lookup", { body: { token } });
  if (!r.ok) {
    $("status").hidden = true;
    showError($("error"), r.error);
    return;
  }
  const inv = r.data;
  $("status").hidden = true;
  $("intro").textContent = words.intro;
  $("as").textContent = words.as;
  $("store-name").textContent = inv.store_name;
  $("role-name").textContent = inv.role.name;
  $("email").textContent = inv.email;
  $("invitation").hidden = false;
  if (!inv.account_exists) {
    $("accept-new").hidden = false;
    $("accept-new").addEventListener("submit", (event) => {
      event.preventDefault();
      accept({ name: $("name").value, password: $("password").value });
    });
  } else {
    $("accept-existing").hidden = false;
    // Signed in already (as that email, or the API says otherwise): accept.
    if (document.body.dataset.signedIn) {
      $("signin-first").hidden = true;
      $("signin-link").hidden = true;
      $("accept-signed-in").hidden = false;
      $("accept-signed-in").addEventListener("click", () => accept({}));
    }
  }
  document.body.dataset.ready = "true";
}

start();
