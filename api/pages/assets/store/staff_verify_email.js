// The page the signup's verification mail opens: the token is in the URL's
// fragment (#token=…); the page proves the address through the JSON API.

import { call, fragmentToken, showError, words } from "./api.js";

const $ = (id) => document.getElementById(id);
const token = fragmentToken("verify_token");

async function start() {
  if (!token) {
    $("status").textContent = words.no_token;
    return;
  }
  const r = await call("POST", "/api/v1/auth/verify-email", { body: { token } });
  sessionStorage.removeItem("verify_token");
  if (!r.ok) {
    $("status").hidden = true;
    showError($("error"), r.error);
    return;
  }
  $("status").textContent = words.done;
  document.body.dataset.verified = "true";
}

start();
