/**
 * The token sign-in the master's and the catalog's pages share: the form that asks
 * for a token when the server answers 401, and its style. The pages keep the token
 * in the browser's `localStorage` (key `permafrost_token`) and send it as
 * `Authorization: Bearer`; it never goes into a URL. Leaf module.
 *
 * @module
 */

/** The key the pages keep the token under. */
export const TOKEN_KEY = "permafrost_token";

/** The form's style (hidden until a 401). */
export const LOGIN_CSS =
  `  #login { margin: 1rem 0; padding: .8rem; border: 1px solid #e3e8ee; border-radius: .4rem; }
  #login[hidden] { display: none; }
  #login input { width: 28rem; max-width: 100%; font: inherit; }
  code { font-size: .85rem; }`;

/**
 * The sign-in form.
 *
 * @param server What asks for the token ("master", "catalog").
 * @returns Its HTML.
 */
export function loginForm(server: string): string {
  return `<form id="login" hidden>
  <label for="token">This ${server} needs a token (<code>Authorization: Bearer</code>):</label><br>
  <input id="token" type="password" autocomplete="off" placeholder="paste a token from cluster add-user">
  <button type="submit">Use token</button>
</form>`;
}
