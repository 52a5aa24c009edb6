/**
 * The console's only stylesheet and script, served from memory (no build step). The script is progressive
 * enhancement: copy buttons, and live regions refreshed on the server's change events; every form and link
 * works without it.
 */
export const STYLESHEET = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5160; --line: #c9ced6; --accent: #0b57d0; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; z-index: 10; }
header.top { background: #12263f; color: #fff; padding: .6rem 1.2rem; display: flex; gap: 1.5rem; align-items: center; flex-wrap: wrap; }
header.top a { color: #fff; }
header.top .brand { font-weight: 700; text-decoration: none; }
header.top form { margin-left: auto; }
nav.account { background: #fff; border-bottom: 1px solid var(--line); padding: 0 1.2rem; }
nav.account ul { list-style: none; margin: 0; padding: 0; display: flex; gap: 1rem; flex-wrap: wrap; }
nav.account a { display: inline-block; padding: .6rem 0; text-decoration: none; }
nav.account a[aria-current="page"] { font-weight: 700; border-bottom: 3px solid var(--accent); color: var(--ink); }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.2rem 3rem; }
h1 { font-size: 1.5rem; margin: .6rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.6rem 0 .6rem; }
section.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .8rem 1rem; margin: 1rem 0; }
section.card > h2:first-child, section.card > h3:first-child { margin-top: .2rem; }
table { border-collapse: collapse; width: 100%; background: #fff; }
caption { text-align: left; font-weight: 600; padding: .4rem 0; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f5; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .9em; }
pre { white-space: pre-wrap; word-break: break-all; background: #eef1f5; padding: .5rem; border-radius: 4px; margin: .3rem 0; }
form.inline { display: inline; }
form.stack > div, form.stack > fieldset { margin: .5rem 0; }
label { font-weight: 600; }
fieldset { border: 1px solid var(--line); border-radius: 4px; }
fieldset label { font-weight: 400; margin-right: 1rem; white-space: nowrap; }
input[type=text], input[type=url], input[type=number], input[type=password], input[type=tel], select, textarea { font: inherit; padding: .3rem .4rem; border: 1px solid #767f8c; border-radius: 4px; background: #fff; color: var(--ink); }
button { font: inherit; padding: .3rem .8rem; border-radius: 4px; border: 1px solid #0b57d0; background: #0b57d0; color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: #0b57d0; }
button.danger { background: #a3161a; border-color: #a3161a; }
.flash { padding: .6rem .8rem; border-radius: 4px; margin: .6rem 0; }
.flash.ok { background: #e3f4e8; border: 1px solid #1e7b34; }
.flash.error { background: #fde7e7; border: 1px solid #a3161a; }
.secret { background: #fff8e1; border: 2px solid #8a6100; border-radius: 6px; padding: .8rem 1rem; }
.secret code { font-size: 1rem; word-break: break-all; }
.muted { color: var(--muted); }
.status { display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: .85em; font-weight: 600; border: 1px solid currentColor; }
.status.delivered, .status.completed { color: #1a6b2d; }
.status.failed, .status.undelivered, .status.rejected, .status.expired, .status.cancelled { color: #a3161a; }
.status.queued, .status.sent, .status.pending, .status.sending { color: #3b4a63; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
ol.path { display: flex; flex-wrap: wrap; gap: .5rem; list-style: none; padding: 0; }
ol.path li:not(:last-child)::after { content: " \\2192"; color: var(--muted); }
.phone { max-width: 380px; background: #fff; border: 10px solid #1b1f24; border-radius: 28px; padding: 1rem .8rem; min-height: 300px; }
.phone ol { list-style: none; padding: 0; margin: 0; }
.bubble { background: #e9ecf1; border-radius: 14px; padding: .5rem .7rem; margin: .5rem 0; }
.bubble .from { font-weight: 700; font-size: .85em; }
.bubble .code { font-size: 1.3rem; letter-spacing: .15em; font-weight: 700; }
.bubble.voice { background: #e7efff; }
.pager { margin: .8rem 0; }
`;

export const SCRIPT = `
(() => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false;
    button.addEventListener('click', async () => {
      const target = document.getElementById(button.dataset.copy);
      try {
        await navigator.clipboard.writeText(target.textContent.trim());
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Select and copy it by hand';
      }
    });
  }
  const live = document.body.dataset.live;
  if (!live || !window.EventSource) return;
  let refreshing = false;
  let again = false;
  const refresh = async () => {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      const response = await fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } });
      if (!response.ok) return;
      const next = new DOMParser().parseFromString(await response.text(), 'text/html');
      for (const region of document.querySelectorAll('[data-live-region]')) {
        const fresh = next.getElementById(region.id);
        if (fresh && fresh.innerHTML !== region.innerHTML) region.innerHTML = fresh.innerHTML;
      }
    } finally {
      refreshing = false;
      if (again) { again = false; refresh(); }
    }
  };
  new EventSource(live).addEventListener('change', refresh);
})();
`;
