// Marquee console: a client of the public API (docs/api.md), nothing more.
// Every page reads and writes through the API with the signed-in session's
// cookie and CSRF token; what a role may not do is not offered, and the
// server refuses it anyway. No build step: this file is served as written.
'use strict';
(() => {
  // ---- DOM helpers: every text goes in as text, never as HTML.
  const el = (tag, attrs = {}, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'text') e.textContent = v;
      else if (k === 'value') e.value = v;
      else if (k === 'checked') e.checked = !!v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k);
    return e;
  };
  const main = () => document.getElementById('main');
  const show = (...kids) => { const m = main(); m.replaceChildren(...kids.filter(k => k !== null && k !== undefined && k !== false)); };
  // copyButton copies text to the clipboard or, where the browser refuses,
  // selects it in box (an input or textarea) for the person to copy; a
  // status next to the button says which.
  const copyButton = (text, box, id) => {
    const said = el('span', { class: 'muted', 'aria-live': 'polite' });
    return [el('button', { type: 'button', id, text: 'Copy', onclick: async () => {
      try { await navigator.clipboard.writeText(text); said.textContent = 'Copied.'; } catch (_) {
        if (box && box.select) { box.select(); said.textContent = 'Selected: press Ctrl+C to copy.'; } else said.textContent = 'Select it and copy it.';
      }
    } }), said];
  };
  const nf = new Intl.NumberFormat('en');
  const num = n => (n === null || n === undefined) ? '—' : nf.format(n);
  const pct = x => (x === null || x === undefined) ? '—' : (100 * x).toFixed(2) + '%';
  // Money is in the one currency the server is configured with
  // (-currency, told by the session), to 1/10,000 at most.
  const currency = () => (session && session.currency) || 'USD';
  const moneyFormats = {};
  const money = x => {
    if (x === null || x === undefined) return '—';
    const c = currency();
    try {
      const f = moneyFormats[c] || (moneyFormats[c] = new Intl.NumberFormat('en', { style: 'currency', currency: c, maximumFractionDigits: 4 }));
      return f.format(x);
    } catch (_) { return nf.format(x) + ' ' + c; }
  };
  const priceModels = { cpm: 'per 1,000 impressions (CPM)', vcpm: 'per 1,000 viewable impressions (vCPM)', cpc: 'per click (CPC)', cpa: 'per conversion (CPA)',
    flat: 'for the whole flight (flat)', daily: 'a day of the flight (flat)' };
  const priceText = p => p ? money(+p.amount) + ' ' + (priceModels[p.model] || p.model) : 'none';
  const budgetText = b => b ? [b.daily !== undefined ? money(+b.daily) + ' a day' : '', b.total !== undefined ? money(+b.total) + ' in all' : ''].filter(Boolean).join(', ') : 'none';
  const day = 86400e3;
  let uid = 0;
  const nextId = p => p + '-' + (++uid);

  // ---- The API.
  let session = null; // {actor, user, scopes, csrfToken}
  class ApiError extends Error {
    constructor(status, body) {
      super(body && body.error ? body.error : 'the server answered ' + status);
      this.status = status; this.body = body || {};
    }
  }
  // gen counts renders: an answer that arrives after the page changed is
  // dropped (Stale), so a slow page never draws over the one you went to.
  let gen = 0;
  class Stale extends Error {}
  async function api(method, path, body, opt = {}) {
    const g = gen;
    const headers = { Accept: opt.accept || 'application/json' };
    if (body !== undefined) headers['Content-Type'] = opt.type || 'application/json';
    if (method !== 'GET' && session && session.csrfToken) headers['X-CSRF-Token'] = session.csrfToken;
    let r;
    try {
      r = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : opt.type ? body : JSON.stringify(body) });
    } catch (e) {
      throw new ApiError(0, { error: 'cannot reach the server (' + e.message + ')' });
    }
    if (r.status === 401 && !opt.signIn) {
      session = null;
      toSignIn();
      throw new ApiError(401, { error: 'your session has ended: sign in again' });
    }
    // A read the server could not answer now (503: the store was slow)
    // is asked again when its Retry-After says, twice at most.
    if (r.status === 503 && method === 'GET' && (opt.tries || 0) < 2) {
      await new Promise(done => setTimeout(done, Math.min(5, +r.headers.get('Retry-After') || 1) * 1000));
      if (g !== gen) throw new Stale('the page changed');
      return api(method, path, body, { ...opt, tries: (opt.tries || 0) + 1 });
    }
    if (!r.ok) {
      let b = {};
      try { b = await r.json(); } catch (_) { /* not JSON */ }
      throw new ApiError(r.status, b);
    }
    const out = r.status === 204 ? null : await (opt.text ? r.text() : r.json());
    if (g !== gen && method === 'GET') throw new Stale('the page changed');
    return out;
  }
  const can = scope => !!session && session.scopes.includes(scope);
  // The world of an advertiser's or a publisher's account (the API
  // answers it only its own; the console shows it only its pages).
  const asAdvertiser = () => !!session && !!(session.advertisers || []).length;
  const asPublisher = () => !!session && !!(session.sites || []).length;
  // mayDraft: the team's campaigns:write, or an advertiser's account with
  // campaigns:submit (its own drafts: docs/api.md#accounts).
  const mayDraft = () => can('campaigns:write') || asAdvertiser() && can('campaigns:submit');
  const errorBox = e => el('div', { class: 'error', role: 'alert', text: e.status === 403 && e.body.missing ?
    'You may not do this: it needs the "' + e.body.missing + '" permission.' : 'Could not do that: ' + e.message });

  // ---- Routing: #/path?query.
  const routes = [];
  const route = (re, scope, page) => routes.push({ re, scope, page });
  const publicPages = ['/signin', '/setup', '/invite']; // shown without a session (an invitation's token follows /invite/)
  function here() {
    const h = location.hash.replace(/^#/, '') || '/';
    const [path, qs] = h.split('?');
    return { path, q: new URLSearchParams(qs || '') };
  }
  const go = hash => { if (location.hash === hash) render(); else location.hash = hash; };
  function toSignIn() {
    const h = location.hash;
    if (!h.startsWith('#/signin')) sessionStorage.setItem('marquee.next', h || '#/');
    go('#/signin');
  }
  // A page that reports figures asks to be refreshed (refresh()): every
  // 30 s while it is shown, the tab visible and nothing in it focused for
  // typing, it is drawn again in place.
  let refreshTimer = 0;
  const refreshEvery = 30e3;
  function refresh() {
    const hash = location.hash;
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(function again() {
      if (location.hash !== hash) return;
      const a = document.activeElement;
      if (document.visibilityState !== 'visible' || (a && main().contains(a) && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName))) {
        refreshTimer = setTimeout(again, refreshEvery);
        return;
      }
      render(true);
    }, refreshEvery);
    return el('p', { class: 'muted updated', text: 'Updated ' + new Date().toLocaleTimeString() + ' · refreshes every 30 s' });
  }
  async function render(quiet) {
    gen++;
    clearTimeout(refreshTimer);
    const { path, q } = here();
    if (!publicPages.includes(path.replace(/^\/invite\/.*/, '/invite')) && !session) {
      try { session = await api('GET', '/api/v1/session'); } catch (e) { if (!(e instanceof Stale) && e.status !== 401) show(errorBox(e)); return; }
    }
    frame();
    for (const r of routes) {
      const m = path.match(r.re);
      if (!m) continue;
      if (r.scope && !can(r.scope)) { show(el('h1', { text: 'Not allowed' }), el('p', { text: 'Your role does not include "' + r.scope + '".' })); return; }
      if (!quiet) show(el('p', { class: 'loading', text: 'Loading…' }));
      try { await r.page(m.slice(1).map(decodeURIComponent), q); } catch (e) { if (e instanceof Stale) return; if (e.status !== 401) show(errorBox(e)); }
      if (!quiet) main().focus({ preventScroll: true });
      return;
    }
    show(el('h1', { text: 'No such page' }), el('p', {}, el('a', { href: '#/', text: 'Go to the overview' })));
  }
  window.addEventListener('hashchange', render);

  // ---- The frame: navigation by what the session may see.
  function frame() {
    const top = document.getElementById('top');
    if (!session || publicPages.includes(here().path.replace(/^\/invite\/.*/, '/invite'))) { top.hidden = true; return; }
    top.hidden = false;
    let items = [['#/', 'Overview', 'reports:read'], ['#/ads', 'Ads', 'ads:read'], ['#/campaigns', 'Campaigns', 'campaigns:read'],
      ['#/approvals', 'Approvals', 'campaigns:approve'], ['#/risk', 'Delivery risk', 'campaigns:read'], ['#/advertisers', 'Advertisers', 'campaigns:read'], ['#/placements', 'Placements', 'campaigns:read'], ['#/reports', 'Reports', 'reports:read'], ['#/bidders', 'Bidders', 'reports:read'], ['#/decisions', 'Preview', 'campaigns:read'], ['#/links', 'Links', 'links:read'],
      ['#/deals', 'Deals', 'campaigns:read'], ['#/demand', 'Demand', 'campaigns:read'], ['#/sites', 'Sites', 'campaigns:read'], ['#/invoices', 'Invoices', 'reports:read'], ['#/statements', 'Statements', 'reports:read'],
      ['#/live', 'Live', null], ['#/webhooks', 'Webhooks', 'webhooks:admin'], ['#/users', 'Users', 'keys:admin'], ['#/keys', 'Keys', 'keys:admin'], ['#/audit', 'Audit', 'keys:admin']];
    if (asAdvertiser()) items = [['#/', 'Home', null], ['#/campaigns', 'Campaigns', 'campaigns:read'], ['#/ads', 'Ads', 'ads:read'], ['#/reports', 'Reports', 'reports:read'], ['#/invoices', 'Invoices', 'reports:read']];
    if (asPublisher()) items = [['#/', 'Home', null], ['#/placements', 'Placements', 'campaigns:read'], ['#/sites', 'Sites', 'campaigns:read'], ['#/reports', 'Reports', 'reports:read'], ['#/bidders', 'Bidders', 'reports:read'], ['#/statements', 'Statements', 'reports:read']];
    const cur = '#' + here().path;
    const nav = document.getElementById('nav');
    nav.replaceChildren(...items.filter(i => !i[2] || can(i[2])).map(([h, t]) =>
      el('a', { href: h, text: t, 'aria-current': (cur === h || (h !== '#/' && cur.startsWith(h))) ? 'page' : null })));
    const at = nav.querySelector('[aria-current=page]');
    if (at && nav.scrollWidth > nav.clientWidth) nav.scrollLeft = Math.max(0, at.offsetLeft - nav.offsetLeft - nav.clientWidth / 2 + at.offsetWidth / 2);
    moreSections(nav);
    document.getElementById('who').replaceChildren(el('a', { href: '#/account', text: session.user ? session.user.email + ' (' + session.user.role + ')' : session.actor }));
  }
  // On a narrow screen the sections scroll sideways on one line: the
  // side that has more of them fades out, with an arrow, so that nobody
  // takes the three they see for all there are.
  function moreSections(nav) {
    const right = nav.scrollLeft + nav.clientWidth < nav.scrollWidth - 2, left = nav.scrollLeft > 2;
    nav.classList.toggle('more-right', right);
    nav.classList.toggle('more-left', left);
    document.getElementById('top').classList.toggle('more-right', right);
  }
  document.addEventListener('DOMContentLoaded', () => {
    const nav = document.getElementById('nav');
    nav.addEventListener('scroll', () => moreSections(nav), { passive: true });
    addEventListener('resize', () => moreSections(nav));
    document.getElementById('signout').addEventListener('click', async () => {
      try { await api('DELETE', '/api/v1/session'); } catch (_) { /* signed out either way */ }
      session = null;
      sessionStorage.removeItem('marquee.next');
      go('#/signin');
    });
    render();
  });

  // ---- Forms.
  function field(label, input, name, hint) {
    const id = input.id || (input.id = nextId('f'));
    const f = el('div', { class: 'field', 'data-field': name || '' }, el('label', { for: id, text: label }), input);
    if (hint) f.append(el('div', { class: 'muted', text: hint }));
    return f;
  }
  // parentKey is the field that holds a problem's key: conditions[0] for
  // conditions[0].country, conditions for conditions[0]; '' at the top.
  const parentKey = k => { const m = k.match(/^(.*?)(\.[^.[\]]+|\[\d+\])$/); return m ? m[1] : ''; };
  // showProblems puts each of the API's problems beside the field it names
  // (its data-field, or the nearest enclosing one), and the rest at the top.
  // campaignNames and advertiserNames map ids to names, each from one
  // list read at most every 30 s (empty for a role that may not read
  // campaigns): names where ids would show.
  const namesOf = (path) => {
    let names = null, at = 0;
    return async () => {
      if (!can('campaigns:read')) return new Map();
      if (!names || Date.now() - at > 30000) {
        at = Date.now();
        names = api('GET', path + '?limit=1000').then(r => new Map(r.items.map(c => [String(c.id), c.name]))).catch(() => new Map());
      }
      return names;
    };
  };
  const campaignNames = namesOf('/api/v1/campaigns'), advertiserNames = namesOf('/api/v1/advertisers');
  const campaignLink = (id, m) => el('a', { href: '#/campaigns/' + id, text: m.get(String(id)) || 'campaign ' + id });
  const advertiserLink = (id, m) => el('a', { href: '#/advertisers/' + id, text: m.get(String(id)) || 'advertiser ' + id });

  // previewing is the HTML creative previews being drawn (the editor's,
  // or a page of approvals): each frame and the HTML it is given once its
  // page says it is ready (one listener for every preview).
  let previewing = null;
  addEventListener('message', e => {
    if (e.data !== 'marquee-preview-ready') return;
    const view = [...document.querySelectorAll('iframe.creative-view')].find(f => f.contentWindow === e.source);
    const html = previewing && e.source === previewing.frame.contentWindow ? previewing.html : view ? view.html : undefined;
    if (html !== undefined) e.source.postMessage(html, '*'); // the sandboxed frame's origin is opaque: '*' is the only target
  });
  // previewURL is a preview frame's URL, asked once and used until shortly
  // before it expires.
  let preview = null, previewAsked = null;
  const previewURL = async () => {
    if (preview && Date.parse(preview.expiresAt) - Date.now() > 5 * 60e3) return preview.url;
    previewAsked = previewAsked || api('GET', '/api/v1/creative-preview').finally(() => { previewAsked = null; });
    preview = await previewAsked;
    return preview.url;
  };
  // creativeView is a creative as it will render: an image at its size,
  // HTML in the sandboxed preview page, a native card, a video's facts.
  function creativeView(c) {
    if (!c) return el('span', { class: 'muted', text: 'no creative' });
    const w = c.width || 300, h = c.height || 250;
    if (c.type === 'image') return el('img', { src: c.image, width: w, height: h, alt: 'The image creative at its size', class: 'creative-view' });
    if (c.type === 'html' || c.type === 'tag') {
      // Framed where creatives serve, at a frame URL as they serve
      // (GET /api/v1/creative-preview): a creative cannot tell its reviewer
      // from its audience, and its preview cannot call home.
      const frame = el('iframe', { sandbox: 'allow-scripts', width: w, height: h, title: 'The HTML creative at its size', referrerpolicy: 'no-referrer', class: 'creative-view' });
      frame.html = c.html || ''; // given once its page is ready (the listener above)
      previewURL().then(u => { frame.src = u; }, () => { frame.replaceWith(el('span', { class: 'muted', text: 'The preview could not be opened.' })); });
      return frame;
    }
    if (c.type === 'native') return el('div', { class: 'native creative-view' }, c.imageUrl ? el('img', { src: c.imageUrl, alt: '' }) : null,
      el('strong', { text: c.title || '' }), el('p', { text: c.body || '' }), el('span', { class: 'button', text: c.cta || 'Learn more' }),
      el('small', { class: 'muted', text: c.sponsoredBy ? 'Sponsored by ' + c.sponsoredBy : 'Sponsored' }));
    return el('p', { class: 'muted', text: c.type + ': ' + (c.mediaUrl || '') + (c.durationMs ? ', ' + c.durationMs / 1000 + ' s' : '') });
  }
  // changedSince names what of ad a differs from its last approved version
  // (review.approved): its title, landing page, each field of its creative.
  function changedSince(a) {
    const was = a.review && a.review.approved;
    if (!was) return null;
    const out = [];
    if (was.title !== a.title) out.push('title (was "' + was.title + '")');
    if ((was.url || '') !== (a.url || '')) out.push('landing page (was ' + (was.url || 'none') + ')');
    const c = a.creative || {}, o = was.creative || {};
    for (const k of new Set([...Object.keys(c), ...Object.keys(o)])) {
      if (JSON.stringify(c[k]) !== JSON.stringify(o[k])) out.push('creative ' + k + (typeof o[k] === 'string' && o[k].length < 80 ? ' (was ' + o[k] + ')' : ''));
    }
    return out;
  }

  // savedWarnings are the warnings of the last save, shown by the editor
  // it leads to: {id, warnings}.
  let savedWarnings = null;

  // showWarnings shows, beside each field, what the API warned of on a
  // save that succeeded, and a notice saying so with a way on (href).
  function showWarnings(form, warnings, href) {
    const left = [];
    for (const [key, msg] of Object.entries(warnings)) {
      let k = key, f = null;
      while (k && !(f = form.querySelector('[data-field="' + CSS.escape(k) + '"]'))) k = parentKey(k);
      if (!f) { left.push(key + ': ' + msg); continue; }
      f.append(el('div', { class: 'warning', role: 'status', text: (k === key ? '' : key + ': ') + msg }));
    }
    form.prepend(el('div', { class: 'notice', id: 'saved-with-warnings', role: 'status' },
      el('p', { text: 'Saved, with warnings: the ad serves as it is; change what is marked below, or ' }), el('a', { href, text: 'see the ad' }),
      left.length ? el('ul', {}, left.map(t => el('li', { text: t }))) : null));
  }

  function showProblems(form, e) {
    // A field still focused commits its change now, not when the focus
    // moves to the first problem (which would take that problem away).
    if (form.contains(document.activeElement)) document.activeElement.blur();
    form.querySelectorAll('.problem').forEach(p => p.remove());
    form.querySelectorAll('.field.bad').forEach(f => f.classList.remove('bad'));
    form.querySelectorAll('.error').forEach(p => p.remove());
    const left = [];
    for (const [key, msg] of Object.entries((e.body && e.body.problems) || {})) {
      let k = key, f = null;
      while (k && !(f = form.querySelector('[data-field="' + CSS.escape(k) + '"]'))) k = parentKey(k);
      if (!f) { left.push(key + ': ' + msg); continue; }
      f.classList.add('bad');
      const p = el('div', { class: 'problem', role: 'alert', text: (k === key ? '' : key + ': ') + msg });
      f.append(p);
      const input = f.querySelector('input,select');
      if (input) { input.setAttribute('aria-invalid', 'true'); input.setAttribute('aria-describedby', p.id = nextId('p')); }
      // Changing the field takes its problem away: the next save checks again.
      const fixed = () => {
        p.remove();
        if (!f.querySelector('.problem')) f.classList.remove('bad');
        if (input) { input.removeAttribute('aria-invalid'); input.removeAttribute('aria-describedby'); }
        f.removeEventListener('input', fixed); f.removeEventListener('change', fixed);
      };
      f.addEventListener('input', fixed); f.addEventListener('change', fixed);
    }
    const box = errorBox(e);
    if (left.length) box.append(el('ul', {}, left.map(t => el('li', { text: t }))));
    form.prepend(box);
    const first = form.querySelector('[aria-invalid="true"]');
    if (first) first.focus();
  }
  const localInput = (iso) => {
    const i = el('input', { type: 'datetime-local', step: '1' });
    if (iso) { const d = new Date(iso); i.value = new Date(d - d.getTimezoneOffset() * 60e3).toISOString().slice(0, 19); }
    return i;
  };
  const fromLocal = v => v ? new Date(v).toISOString() : '';
  const fmtTime = iso => iso ? new Date(iso).toLocaleString() : '—';

  // Confirm inline, not with window.confirm: reachable by keyboard and tests.
  function confirmButton(label, question, action) {
    const wrap = el('span');
    const b = el('button', { type: 'button', class: 'danger', text: label, onclick: () => {
      const yes = el('button', { type: 'button', class: 'danger', text: 'Yes, ' + label.toLowerCase(), onclick: action });
      wrap.replaceChildren(el('span', { role: 'alert', text: question + ' ' }), yes, ' ',
        el('button', { type: 'button', text: 'Cancel', onclick: () => wrap.replaceChildren(b) }));
      yes.focus();
    } });
    wrap.append(b);
    return wrap;
  }

  // ---- Sign in.
  route(/^\/signin$/, null, async () => {
    const err = el('div');
    const email = el('input', { type: 'email', autocomplete: 'username', required: true });
    const pass = el('input', { type: 'password', autocomplete: 'current-password', required: true });
    const key = el('input', { type: 'password', autocomplete: 'off', required: true });
    const signIn = async (body, form) => {
      try {
        session = await api('POST', '/api/v1/session', body, { signIn: true });
        const next = sessionStorage.getItem('marquee.next') || '#/';
        sessionStorage.removeItem('marquee.next');
        go(next.startsWith('#/signin') ? '#/' : next);
      } catch (e) { err.replaceChildren(errorBox(e)); form.querySelector('input').focus(); }
    };
    const f1 = el('form', { class: 'card', id: 'signin-password', onsubmit: ev => { ev.preventDefault(); signIn({ email: email.value, password: pass.value }, f1); } },
      el('h2', { text: 'With your email and password' }), field('Email', email), field('Password', pass),
      el('button', { class: 'primary', type: 'submit', text: 'Sign in' }));
    const f2 = el('form', { class: 'card', id: 'signin-key', onsubmit: ev => { ev.preventDefault(); signIn({ key: key.value }, f2); } },
      el('h2', { text: 'Or with an API key' }), field('API key', key), el('button', { type: 'submit', text: 'Sign in with the key' }));
    show(el('h1', { text: 'Sign in to Marquee' }), err, el('div', { class: 'grid2' }, f1, f2));
    email.focus();
    const setup = await api('GET', '/api/v1/setup', undefined, { signIn: true }).catch(() => null);
    if (setup && setup.needed) {
      err.after(el('div', { class: 'card note', id: 'no-user', role: 'status' },
        el('h2', { text: 'No user exists yet' }),
        el('p', { text: 'Open the setup link that marquee serve printed when it started (it is also in the file setup-link of its data directory, and works for an hour): it makes you the owner. Or add yourself from a terminal:' }),
        el('pre', { text: 'go run ./cmd/marquee users add -email you@example.com -role owner' }),
        el('p', { class: 'muted', text: 'The admin token in data/admin-token works with the API only, not here.' })));
    }
  });

  // choosePassword is a new password typed twice: its two fields, and
  // same(form), which shows the problem beside the second when they
  // differ.
  function choosePassword() {
    const pass = el('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: 12 });
    const again = el('input', { type: 'password', autocomplete: 'new-password', required: true });
    return { pass, fields: [field('Password', pass, 'password', 'At least 12 characters.'), field('Password again', again, 'again')],
      same: form => {
        if (pass.value === again.value) return true;
        showProblems(form, new ApiError(400, { error: 'the two passwords differ', problems: { again: 'must be the same password' } }));
        return false;
      } };
  }

  // ---- First-run set-up: the link marquee serve prints while no user exists.
  route(/^\/setup$/, null, async (_, q) => {
    const err = el('div');
    const email = el('input', { type: 'email', autocomplete: 'username', required: true });
    const pw = choosePassword();
    const form = el('form', { class: 'card', id: 'setup', onsubmit: async ev => {
      ev.preventDefault();
      if (!pw.same(form)) return;
      try {
        session = await api('POST', '/api/v1/setup', { token: q.get('token') || '', email: email.value, password: pw.pass.value }, { signIn: true });
        go('#/');
      } catch (e) { showProblems(form, e); }
    } }, el('p', { text: 'You are the first person here: choose the email and password you will sign in with. You will be the owner, and can add everyone else from Users.' }),
      field('Email', email, 'email'), ...pw.fields,
      el('button', { class: 'primary', type: 'submit', text: 'Create the owner and sign in' }),
      el('div', { class: 'field', 'data-field': 'token' }));
    show(el('h1', { text: 'Set up Marquee' }), err, form);
    email.focus();
  });

  // ---- An invitation: a user added without a password sets one here,
  // once, from the link they were given (POST /api/v1/invitations), and
  // is signed in.
  route(/^\/invite\/([A-Za-z0-9_.-]+)$/, null, async ([token]) => {
    const pw = choosePassword();
    const form = el('form', { class: 'card', id: 'invitation', onsubmit: async ev => {
      ev.preventDefault();
      if (!pw.same(form)) return;
      try {
        session = await api('POST', '/api/v1/invitations', { token, password: pw.pass.value }, { signIn: true });
        go('#/');
      } catch (e) { showProblems(form, e); }
    } }, el('p', { text: 'You were invited to Marquee. Choose the password you will sign in with (the link works once).' }),
      ...pw.fields, el('button', { class: 'primary', type: 'submit', text: 'Set my password and sign in' }));
    show(el('h1', { text: 'Welcome to Marquee' }), form);
    pw.pass.focus();
  });

  // ---- Ranges of reports.
  function rangeOf(q) {
    const now = Date.now();
    const r = q.get('range') || '7d';
    let from, to = now;
    if (r === 'today') { const d = new Date(); d.setHours(0, 0, 0, 0); from = +d; }
    else if (r === '30d') from = now - 30 * day;
    else if (r === 'custom' && q.get('from') && q.get('to')) { from = Date.parse(q.get('from')); to = Date.parse(q.get('to')); }
    else from = now - 7 * day;
    return { r, from: new Date(from).toISOString(), to: new Date(to).toISOString(), span: to - from };
  }
  function rangePicker(q, base) {
    const cur = rangeOf(q);
    const sel = el('select', {}, [['today', 'Today'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days'], ['custom', 'Custom']]
      .map(([v, t]) => el('option', { value: v, text: t, selected: cur.r === v })));
    const from = localInput(cur.from), to = localInput(cur.to);
    const custom = el('span', { class: 'row' }, field('From', from), field('To', to),
      el('button', { type: 'button', text: 'Apply', onclick: () => go(base + '?range=custom&from=' + encodeURIComponent(fromLocal(from.value)) + '&to=' + encodeURIComponent(fromLocal(to.value))) }));
    custom.hidden = cur.r !== 'custom';
    sel.addEventListener('change', () => { if (sel.value === 'custom') custom.hidden = false; else go(base + '?range=' + sel.value); });
    return el('div', { class: 'row' }, field('Range', sel), custom);
  }
  const statsQuery = (rg, extra = '') => '?from=' + encodeURIComponent(rg.from) + '&to=' + encodeURIComponent(rg.to) + '&tz=' +
    encodeURIComponent(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC') + extra;

  // chart draws a report's series over time with uPlot, as small
  // multiples: one plot per unit (impressions, clicks, conversions, spend),
  // each on its own labelled axis from 0, so that 7 impressions and 3
  // clicks are both plain to see and no two scales share a plot. The
  // plots share a cursor; the legend shows the values under it, and
  // nothing otherwise. Ticks fall on the report's own buckets (the last
  // one always labelled, inside the plot) and are labelled as fits its
  // granularity; a bucket still under way (today, this hour) is drawn
  // apart, dashed, as "so far". A range with nothing in it says so
  // instead of drawing an empty grid.
  const css = name => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const tickFormat = {
    hour: new Intl.DateTimeFormat('en', { hour: 'numeric', minute: '2-digit' }),
    day: new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric' }),
    month: new Intl.DateTimeFormat('en', { month: 'short', year: 'numeric' }),
  };
  const bucketSeconds = { hour: 3600, day: 86400, month: 31 * 86400 };
  const chartMetrics = [
    { k: 'impressions', label: 'Impressions', color: '#2456d6', dark: '#8ab0ff' },
    { k: 'clicks', label: 'Clicks', color: '#d6452e', dark: '#ff8a70' },
    { k: 'conversions', label: 'Conversions', color: '#1e7d32', dark: '#7bd88f' },
    { k: 'spend', label: 'Spend', color: '#8a5a00', dark: '#f2c14e', money: true },
  ];
  let chartKey = 0;
  function chart(rep, title) {
    const box = el('div', { class: 'card chart', role: 'group', 'aria-label': title }, el('h3', { class: 'chart-title', text: title }));
    const series = rep.series || [];
    const shown = chartMetrics.filter(m => series.some(p => p[m.k] > 0));
    if (!shown.length) {
      box.append(el('p', { class: 'empty', text: 'No data yet in this range: impressions, clicks and conversions show here within about 10 s of their events.' }));
      box.dataset.points = '0';
      return box;
    }
    const none = chartMetrics.filter(m => !m.money && !shown.includes(m)).map(m => m.label.toLowerCase());
    const gran = rep.granularity || 'day';
    const xs = series.map(p => Date.parse(p.t) / 1000);
    const n = xs.length;
    // The last bucket ends where the next would start: past now, it is partial.
    const lastEnd = n > 1 ? xs[n - 1] + (xs[n - 1] - xs[n - 2]) : xs[0] + bucketSeconds[gran];
    const partial = n > 1 && lastEnd * 1000 > Date.now();
    const whole = k => series.map((p, i) => partial && i === n - 1 ? null : (p[k] || 0));
    const sofar = k => series.map((p, i) => partial && i >= n - 2 ? (p[k] || 0) : null);
    const plots = el('div', { class: 'plots' });
    box.append(plots);
    if (none.length) box.append(el('p', { class: 'muted', text: 'No ' + none.join(' or ') + ' in this range.' }));
    box.dataset.points = String(n);
    box.dataset.partial = partial ? '1' : '';
    box.plots = [];
    const key = 'chart-' + (++chartKey);
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    requestAnimationFrame(() => {
      const width = Math.max(240, Math.min(plots.clientWidth, 1100));
      const ink = css('--fg') || '#1d2330', grid = { stroke: css('--line') || '#dde1e8', width: 1 };
      const fmt = tickFormat[gran] || tickFormat.day;
      const every = Math.max(1, Math.ceil(n / Math.max(2, Math.floor(width / 80))));
      const when = new Intl.DateTimeFormat('en', gran === 'hour' ? { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' } :
        gran === 'month' ? { month: 'long', year: 'numeric' } : { weekday: 'short', month: 'short', day: 'numeric' });
      for (const m of shown) {
        const shows = m.money ? money : num;
        // The legend: values under the cursor, nothing without one.
        const value = (u, v, si, idx) => idx === null || idx === undefined || v === null || v === undefined ? '' : shows(v);
        const stroke = dark ? m.dark : m.color;
        const spec = [{ label: { hour: 'Hour', day: 'Day', month: 'Month' }[gran] || 'Day', value: (u, v, si, idx) => idx === null || idx === undefined ? '' : when.format(new Date(v * 1000)) },
          { label: m.label, stroke, width: 2, value }];
        const data = [xs, whole(m.k)];
        if (partial) { spec.push({ label: 'so far', stroke, width: 2, dash: [5, 5], value }); data.push(sofar(m.k)); }
        const wrap = el('div', { class: 'plot', 'data-metric': m.k });
        plots.append(wrap);
        const plot = new uPlot({
          width, height: 150, padding: [10, 28, 0, 0],
          cursor: { sync: { key }, y: false },
          legend: { live: true },
          scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.15 : 1] } },
          series: spec,
          axes: [
            { stroke: ink, grid, space: 60, size: 36, splits: () => xs.filter((_, i) => (n - 1 - i) % every === 0),
              values: (u, splits) => splits.map(v => fmt.format(new Date(v * 1000))) },
            { label: m.money ? m.label + ' (' + currency() + ')' : m.label, labelSize: 18, size: m.money ? 64 : 52, stroke: ink, grid,
              // Counts tick on whole numbers.
              incrs: m.money ? undefined : [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9],
              values: (u, splits) => splits.map(v => m.money ? money(v) : num(v)) },
          ],
        }, data, wrap);
        plot.metric = m.k;
        box.plots.push(plot);
      }
      box.plot = box.plots[0];
    });
    return box;
  }
  // invalidNote shows what a report left out as invalid traffic, by
  // reason (docs/ivt.md): its events, and the slots it asked for.
  const ivtReasons = { crawler: 'Declared crawlers and bots', preview: 'Link previewers and mail proxies', prefetch: 'Prefetches',
    headless: 'Headless or automated browsers', nonBrowser: 'HTTP libraries and tools, no User-Agent', datacenter: 'Data centres',
    velocity: 'Too many events a minute', fastClick: 'Clicks too soon after the impression', noImpression: 'Clicks without a counted impression',
    repeatClick: 'Repeated clicks', fastConversion: 'Conversions too soon after the click', burst: 'Billed, then credited (a burst)',
    clickLimit: 'Clicks past a campaign\'s limit from one address', clickRate: 'Clicks of an address that clicks too much of what it sees',
    noRenderProof: 'Hits without the proof that their ad rendered', domainMismatch: 'Pages on none of their site\'s domains',
    unauthorized: 'Sites whose ads.txt does not authorise the network' };
  function invalidNote(rep) {
    const inv = rep.invalid || {}, reqs = (rep.totals && rep.totals.invalidRequests) || {};
    const reasons = [...new Set(Object.keys(inv).concat(Object.keys(reqs)))].filter(k => {
      const c = inv[k] || {};
      return c.impressions || c.clicks || c.conversions || reqs[k];
    }).sort();
    if (!reasons.length) return null;
    const hasReqs = Object.keys(reqs).length > 0;
    return el('section', { id: 'invalid-traffic' }, el('h2', { text: 'Invalid traffic, not counted above' }),
      table(['Reason', { t: 'Impressions', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'Conversions', num: 1 }].concat(hasReqs ? [{ t: 'Requests', num: 1 }] : []),
        reasons.map(k => { const c = inv[k] || {}; return [ivtReasons[k] || k, num(c.impressions || 0), num(c.clicks || 0), num(c.conversions || 0)].concat(hasReqs ? [num(reqs[k] || 0)] : []); })),
      el('p', { class: 'muted', text: 'Never billed, and never counted toward goals, pacing or caps. Cut any report by "traffic" to see it beside people\'s.' }));
  }
  function tiles(cur, prev) {
    const t = (k, label, fmt) => {
      const a = cur[k], b = prev ? prev[k] : null;
      let d = null;
      if (b !== null && b !== undefined && a !== null && a !== undefined) {
        const change = b === 0 ? (a === 0 ? 0 : null) : (a - b) / b;
        d = el('div', { class: 'd ' + (change > 0 ? 'up' : change < 0 ? 'down' : 'muted'),
          text: change === null ? 'new in this period' : (change >= 0 ? '+' : '') + (100 * change).toFixed(1) + '% vs previous period' });
      }
      return el('div', { class: 'tile', 'data-kpi': k }, el('div', { class: 'k', text: label }), el('div', { class: 'v', text: fmt(a) }), d);
    };
    // Viewability shows where the tag measured impressions; video
    // completion where videos started.
    // CTR needs impressions: a link's clicks (no impressions) show none.
    return el('div', { class: 'tiles' }, t('impressions', 'Impressions', num), t('clicks', 'Clicks', num), cur.impressions ? t('ctr', 'CTR', pct) : null,
      t('conversions', 'Conversions', num), t('uniques', 'Reach (unique viewers)', num),
      cur.measured ? [t('views', 'Viewable impressions', num), t('viewability', 'Viewability (viewable ÷ measured)', pct)] : null,
      cur.starts ? [t('starts', 'Video starts', num), t('completionRate', 'Video completion', pct)] : null);
  }
  // table draws rows under head (a heading, or {t, num} for a column of
  // numbers). Every column sorts: a click on its heading sorts by it
  // (numbers largest first, text A to Z), a second click the other way.
  function table(head, rows, empty) {
    if (!rows.length) return el('p', { class: 'empty', text: empty });
    const body = el('tbody', {}, rows.map(r => el('tr', {}, r.map((c, i) => el('td', { class: head[i].num ? 'num' : null }, c)))));
    const keyOf = (tr, i) => {
      const t = tr.children[i].textContent.trim();
      if (!head[i].num) return t.toLowerCase();
      const x = parseFloat(t.replace(/[^0-9.eE+-]/g, ''));
      return isNaN(x) ? -Infinity : x;
    };
    const ths = head.map((h, i) => {
      const th = el('th', { class: h.num ? 'num' : null, 'aria-sort': 'none' });
      th.append(el('button', { type: 'button', class: 'sort', text: h.t || h, title: 'Sort by ' + (h.t || h), onclick: () => {
        const first = h.num ? 'descending' : 'ascending';
        const dir = th.getAttribute('aria-sort') === first ? (first === 'ascending' ? 'descending' : 'ascending') : first;
        ths.forEach(x => x.setAttribute('aria-sort', 'none'));
        th.setAttribute('aria-sort', dir);
        const sign = dir === 'ascending' ? 1 : -1;
        body.append(...[...body.children].sort((a, b) => { const x = keyOf(a, i), y = keyOf(b, i); return x < y ? -sign : x > y ? sign : 0; }));
      } }));
      return th;
    });
    return el('div', { class: 'scroll' }, el('table', {}, el('thead', {}, el('tr', {}, ths)), body));
  }

  // ---- Overview (an advertiser's and a publisher's account: their home).
  route(/^\/$/, 'reports:read', async (_, q) => {
    if (asAdvertiser()) return advertiserHome(q);
    if (asPublisher()) return publisherHome(q);
    const rg = rangeOf(q);
    const prev = { from: new Date(Date.parse(rg.from) - rg.span).toISOString(), to: rg.from };
    // Header-bidding bids fill slots with no ad of Marquee's: their
    // impressions are in the reports by several dimensions, not in the
    // ads' totals, so the tiles add them (the chart is the ads').
    const bidImps = r => r ? r.rows.reduce((n, x) => n + x.impressions, 0) : 0;
    const [ads, links, before, bids, bidsBefore] = await Promise.all([
      api('GET', '/api/v1/stats' + statsQuery(rg, '&top=ads&metric=impressions&limit=10')),
      api('GET', '/api/v1/stats' + statsQuery(rg, '&top=links&metric=clicks&limit=10')),
      api('GET', '/api/v1/stats' + statsQuery(prev, '&limit=0')), // totals only
      api('GET', '/api/v1/bidders/stats' + statsQuery(rg)).catch(() => null), api('GET', '/api/v1/bidders/stats' + statsQuery(prev)).catch(() => null)]);
    const withBids = (t, n) => n ? { ...t, impressions: t.impressions + n, ctr: (t.impressions + n) ? t.clicks / (t.impressions + n) : 0 } : t;
    const nBids = bidImps(bids);
    show(el('h1', { text: 'Overview' }), rangePicker(q, '#/'), tiles(withBids(ads.totals, nBids), withBids(before.totals, bidImps(bidsBefore))),
      nBids ? el('p', { class: 'muted', id: 'bid-impressions', text: 'Impressions include ' + num(nBids) + ' filled by header-bidding bids (no ad of Marquee\'s: not in the chart or the top ads; see Bidders).' }) : null,
      invalidNote(ads),
      chart(ads, 'Impressions, clicks and conversions'),
      el('div', { class: 'grid2' },
        el('section', {}, el('h2', { text: 'Top ads by impressions' }), table(['Ad', { t: 'Impressions', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'CTR', num: 1 }, { t: 'Viewability', num: 1 }],
          (ads.top || []).map(t => [el('a', { href: '#/ads/' + t.id, text: t.title || 'Ad ' + t.id + ' (deleted)' }), num(t.impressions), num(t.clicks), pct(t.ctr),
            t.measured ? pct(t.viewability) : '—']), 'No ad was seen in this range.')),
        el('section', {}, el('h2', { text: 'Top links by clicks' }), table(['Link', { t: 'Clicks', num: 1 }, { t: 'Conversions', num: 1 }],
          (links.top || []).map(t => [el('a', { href: '#/links/' + encodeURIComponent(t.id), text: t.id }), num(t.clicks), num(t.conversions)]), 'No link was clicked in this range.'))),
      refresh());
  });

  // An advertiser's home: its campaigns' delivery and results in the range.
  async function advertiserHome(q) {
    const rg = rangeOf(q);
    const rep = await api('GET', '/api/v1/reports' + statsQuery(rg, '&by=campaign'));
    show(el('h1', { text: 'Your campaigns' }), rangePicker(q, '#/'), tiles(rep.totals, null),
      rep.totals.revenue !== undefined ? el('p', { id: 'spend', text: 'Spend in this range: ' + money(rep.totals.revenue) }) : null,
      el('section', { id: 'campaigns-results' }, el('h2', { text: 'Delivery and results' }),
        table(['Campaign', { t: 'Impressions', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'CTR', num: 1 }, { t: 'Conversions', num: 1 }, { t: 'Viewability', num: 1 }, { t: 'Spend', num: 1 }],
          rep.rows.map(r => [el('a', { href: '#/campaigns/' + r.dims.campaign.id, text: r.dims.campaign.name || 'Campaign ' + r.dims.campaign.id }),
            num(r.impressions), num(r.clicks), pct(r.ctr), num(r.conversions), r.measured ? pct(r.viewability) : '—', r.revenue !== undefined ? money(r.revenue) : '—']),
          'None of your campaigns was seen in this range.')),
      el('p', {}, el('a', { href: '#/reports?by=campaign,country', text: 'More reports' })), refresh());
  }
  // A publisher's home: fill rate and revenue by placement in the range.
  async function publisherHome(q) {
    const rg = rangeOf(q);
    const rep = await api('GET', '/api/v1/reports' + statsQuery(rg, '&by=placement'));
    show(el('h1', { text: 'Your placements' }), rangePicker(q, '#/'),
      el('div', { class: 'tiles' }, [['Requests', num(rep.totals.requests)], ['Filled', num(rep.totals.filled)], ['Fill rate', pct(rep.totals.fillRate)],
        ['Revenue', rep.totals.revenue !== undefined ? money(rep.totals.revenue) : '—'], ['eCPM', rep.totals.ecpm !== undefined ? money(rep.totals.ecpm) : '—']]
        .map(([k, v]) => el('div', { class: 'tile', 'data-kpi': k.toLowerCase().replace(' ', '-') }, el('div', { class: 'k', text: k }), el('div', { class: 'v', text: v })))),
      el('section', { id: 'fill-by-placement' }, el('h2', { text: 'Fill rate and revenue by placement' }),
        table(['Placement', { t: 'Requests', num: 1 }, { t: 'Filled', num: 1 }, { t: 'Fill rate', num: 1 }, { t: 'Impressions', num: 1 }, { t: 'Revenue', num: 1 }, { t: 'eCPM', num: 1 }],
          rep.rows.map(r => [el('a', { href: '#/placements/' + r.dims.placement.name, text: r.dims.placement.name }), num(r.requests), num(r.filled),
            r.fillRate !== undefined ? pct(r.fillRate) : '—', num(r.impressions), r.revenue !== undefined ? money(r.revenue) : '—', r.ecpm !== undefined ? money(r.ecpm) : '—']),
          'None of your placements was asked for in this range.')),
      el('p', {}, el('a', { href: '#/reports?by=placement,country', text: 'More reports' })), refresh());
  }

  // ---- Header bidding: each placement's bidders — bids, wins, win rate,
  // impressions, revenue, eCPM (GET /api/v1/bidders/stats; a publisher's
  // own placements only).
  route(/^\/bidders$/, 'reports:read', async (_, q) => {
    if (asAdvertiser()) return show(el('h1', { text: 'Not allowed' }), el('p', { text: 'Bidders are the publishers\' and the ad team\'s.' }));
    const rg = rangeOf(q);
    const r = await api('GET', '/api/v1/bidders/stats' + statsQuery(rg, q.get('placement') ? '&placement=' + encodeURIComponent(q.get('placement')) : ''));
    const total = r.rows.reduce((t, x) => ({ bids: t.bids + x.bids, wins: t.wins + x.wins, impressions: t.impressions + x.impressions, revenue: t.revenue + +x.revenue }),
      { bids: 0, wins: 0, impressions: 0, revenue: 0 });
    show(el('h1', { text: 'Bidders' }), el('p', { class: 'muted', text: 'Header-bidding bids each placement received (Prebid.js and server-to-server), the ones that won their slot, and what the won impressions earned at their bids\' CPM.' }),
      rangePicker(q, '#/bidders'),
      el('div', { class: 'tiles' }, [['Bids', num(total.bids)], ['Wins', num(total.wins)], ['Win rate', total.bids ? pct(total.wins / total.bids) : '—'],
        ['Impressions', num(total.impressions)], ['Revenue', money(total.revenue)], ['eCPM', total.impressions ? money(total.revenue * 1000 / total.impressions) : '—']]
        .map(([k, v]) => el('div', { class: 'tile', 'data-kpi': k.toLowerCase().replace(' ', '-') }, el('div', { class: 'k', text: k }), el('div', { class: 'v', text: v })))),
      el('div', { id: 'bidders' }, table(['Placement', 'Bidder', { t: 'Bids', num: 1 }, { t: 'Wins', num: 1 }, { t: 'Win rate', num: 1 }, { t: 'Impressions', num: 1 }, { t: 'Revenue', num: 1 }, { t: 'eCPM', num: 1 }],
        r.rows.map(x => [el('a', { href: '#/placements/' + x.placement, text: x.placement }), x.bidder, num(x.bids), num(x.wins), x.bids ? pct(x.winRate) : '—',
          num(x.impressions), money(x.revenue), x.impressions ? money(x.ecpm) : '—']), 'No bid in this range.')), refresh());
  });

  // ---- Reports by several dimensions: the table, its CSV and XLSX (the
  // same cells), and saved reports with their schedules.
  const reportDims = () => asAdvertiser() ? ['advertiser', 'campaign', 'ad', 'country', 'device', 'traffic'] :
    asPublisher() ? ['placement', 'site', 'bidder', 'privacy', 'country', 'device', 'traffic'] : ['advertiser', 'campaign', 'ad', 'placement', 'site', 'bidder', 'privacy', 'country', 'device', 'traffic'];
  route(/^\/reports$/, 'reports:read', async (_, q) => {
    const dims = reportDims().concat((session.reportKeys || []).map(k => 'kv.' + k));
    const by = (q.get('by') || dims[0]).split(',').filter(Boolean).slice(0, 3);
    const gran = q.get('granularity') || 'total';
    const rg = rangeOf(q);
    const query = 'by=' + by.join(',') + '&granularity=' + gran;
    const [rep, saved] = await Promise.all([api('GET', '/api/v1/reports' + statsQuery(rg, '&' + query)), api('GET', '/api/v1/saved-reports')]);
    const pick = i => {
      const s = el('select', { name: 'by' + i }, el('option', { value: '', text: i ? '(none)' : '' }), dims.map(d => el('option', { value: d, text: d, selected: by[i] === d })));
      return field(i ? 'Then by' : 'By', s);
    };
    const picks = [0, 1, 2].map(pick);
    const granSel = el('select', { name: 'granularity' }, ['total', 'day', 'month'].map(g => el('option', { value: g, text: g, selected: gran === g })));
    const apply = () => {
      const b = picks.map(p => p.querySelector('select').value).filter(Boolean);
      go('#/reports?by=' + [...new Set(b)].join(',') + '&granularity=' + granSel.value + (q.get('range') ? '&range=' + q.get('range') : ''));
    };
    picks.concat([field('Granularity', granSel)]).forEach(f => f.querySelector('select').addEventListener('change', apply));
    // The table: the columns chosen (remembered in this browser; the
    // CSV and XLSX keep every one), a ratio without its denominator "—",
    // times as dates in this browser's time zone (the report's).
    const cur = session.currency;
    const named = d => ['advertiser', 'campaign', 'ad', 'placement'].includes(d);
    const opt = (v, f) => v === undefined ? '—' : f(v);
    const per = (n, v, f) => !n || v === undefined ? '—' : f(v); // a ratio of n: none without it
    const metrics = [
      ['impressions', 'Impressions', r => num(r.impressions)], ['clicks', 'Clicks', r => num(r.clicks)], ['ctr', 'CTR', r => per(r.impressions, r.ctr, pct)],
      ['conversions', 'Conversions', r => num(r.conversions)], ['postClick', 'Post-click', r => num(r.postClickConversions)], ['postView', 'Post-view', r => num(r.postViewConversions)],
      ['views', 'Views', r => num(r.views)], ['viewability', 'Viewability', r => per(r.impressions, r.viewability, pct)],
      ['requests', 'Requests', r => opt(r.requests, num)], ['filled', 'Filled', r => opt(r.filled, num)], ['fillRate', 'Fill rate', r => per(r.requests, r.fillRate, pct)],
      ['spend', 'Spend (' + cur + ')', r => opt(r.spend, money)], ['ecpm', 'eCPM (' + cur + ')', r => per(r.impressions, r.ecpm, money)],
      ['ecpc', 'eCPC (' + cur + ')', r => per(r.clicks, r.ecpc, money)], ['ecpa', 'eCPA (' + cur + ')', r => per(r.conversions, r.ecpa, money)],
      ['value', 'Conversion value (' + cur + ')', r => opt(r.conversionValue, money)], ['roas', 'ROAS', r => per(+r.spend, r.roas, x => x.toFixed(2))],
      ['bids', 'Bids', r => opt(r.bids, num)], ['wins', 'Wins', r => opt(r.wins, num)], ['winRate', 'Win rate', r => per(r.bids, r.winRate, pct)],
      ['limited', 'Limited', r => opt(r.limited, num)], ['limitedRate', 'Limited rate', r => per(r.requests, r.limitedRate, pct)]];
    const defaultCols = ['impressions', 'clicks', 'ctr', 'conversions', 'requests', 'fillRate', 'spend', 'ecpm'];
    let cols = defaultCols;
    try { const saved = JSON.parse(localStorage.getItem('marquee.reportColumns') || 'null'); if (Array.isArray(saved) && saved.length) cols = saved; } catch (_) {}
    // By bidder, the bids' own figures are shown whatever the choice; by
    // privacy, the slots limited and their rate.
    const shown = metrics.filter(([k]) => cols.includes(k) || by.includes('bidder') && ['bids', 'wins', 'winRate'].includes(k) ||
      by.includes('privacy') && ['requests', 'limited', 'limitedRate'].includes(k));
    const picker = el('details', { id: 'column-picker' }, el('summary', { text: 'Columns (' + shown.length + ' of ' + metrics.length + ')' }),
      el('div', { class: 'checks', role: 'group', 'aria-label': 'Columns shown' }, metrics.map(([k, t]) => el('label', {}, el('input', { type: 'checkbox', value: k, checked: cols.includes(k),
        onchange: ev => {
          const next = [...ev.target.closest('.checks').querySelectorAll('input:checked')].map(i => i.value);
          localStorage.setItem('marquee.reportColumns', JSON.stringify(next.length ? next : defaultCols));
          render(true);
        } }), t))));
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    const when = t => gran === 'month' ? new Date(t).toLocaleDateString(undefined, { timeZone: zone, year: 'numeric', month: 'long' }) :
      new Date(t).toLocaleDateString(undefined, { timeZone: zone, year: 'numeric', month: 'short', day: 'numeric', weekday: 'short' });
    const head = (gran !== 'total' ? [gran === 'month' ? 'Month' : 'Day'] : []).concat(by.flatMap(d => named(d) ? [d + ' id', d] : [d]), shown.map(([, t]) => ({ t, num: 1 })));
    const rows = rep.rows.map(r => (gran !== 'total' ? [when(r.t)] : []).concat(by.flatMap(d => { const c = r.dims[d] || {}; return named(d) ? [c.id || '—', c.name || '—'] : [c.value || '—']; }),
      shown.map(([, , f]) => f(r))));
    const exportQ = statsQuery(rg, '&' + query);
    const name = el('input', { name: 'name', placeholder: 'A name for this report' });
    const every = el('select', { name: 'every' }, [['', 'Not emailed'], ['daily', 'Every day'], ['weekly', 'Every Monday'], ['monthly', 'Every month (the 1st)']]
      .map(([v, t]) => el('option', { value: v, text: t })));
    const to = el('input', { name: 'to', placeholder: 'ana@example.com, bo@example.com' });
    const at = el('input', { name: 'at', type: 'time', value: '08:00', 'aria-label': 'Send at (your time)' });
    const format = el('select', { name: 'format' }, ['csv', 'xlsx'].map(f => el('option', { value: f, text: f.toUpperCase() })));
    const form = el('form', { id: 'save-report', class: 'row' }, field('Save as', name, 'name'), field('Email', every, 'schedule.every'),
      field('At (your time)', at, 'schedule.at'), field('To', to, 'schedule.to'), field('As', format, 'schedule.format'), el('button', { text: 'Save' }));
    form.addEventListener('submit', async e => {
      e.preventDefault();
      const body = { name: name.value, query };
      if (every.value) body.schedule = { every: every.value, to: to.value.split(',').map(x => x.trim()).filter(Boolean), format: format.value,
        at: at.value || '08:00', timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' };
      try { await api('POST', '/api/v1/saved-reports', body); render(); } catch (err) { showProblems(form, err); }
    });
    show(el('h1', { text: 'Reports' }), rangePicker(q, '#/reports?' + query), el('div', { class: 'row' }, picks, field('Granularity', granSel)),
      el('p', { class: 'row' }, el('a', { href: '/api/v1/reports' + exportQ + '&format=csv', download: 'report.csv', id: 'report-csv', text: 'Download CSV' }), ' ',
        el('a', { href: '/api/v1/reports' + exportQ + '&format=xlsx', download: 'report.xlsx', id: 'report-xlsx', text: 'Download XLSX' })),
      picker, el('section', { id: 'report-table' }, table(head, rows, 'Nothing counted in this range.'),
        rep.truncated ? el('p', { class: 'muted', text: 'The first ' + rep.rows.length + ' rows; the totals count them all.' }) : null,
        el('p', { id: 'report-totals', class: 'muted', text: 'Totals: ' + num(rep.totals.impressions) + ' impressions' +
          (rep.totals.requests !== undefined ? ', ' + num(rep.totals.requests) + ' requests, fill rate ' + pct(rep.totals.fillRate) : '') +
          (rep.totals.invalidRequests ? ', ' + num(Object.values(rep.totals.invalidRequests).reduce((a, b) => a + b, 0)) + ' requests of invalid traffic (not counted)' : '') +
          (rep.totals.spend !== undefined ? ', spend ' + money(rep.totals.spend) + ', ' + num(rep.totals.conversions) + ' conversions (' + num(rep.totals.postViewConversions) +
            ' post-view) worth ' + money(rep.totals.conversionValue) + ', ROAS ' + rep.totals.roas.toFixed(2) : '') })),
      reportKeysForm(render),
      el('section', {}, el('h2', { text: 'Saved reports' }), form,
        el('div', { id: 'saved-reports' }, table(['Name', 'What it shows', 'Emailed', ''], saved.savedReports.map(s => [el('a', { href: '#/reports?' + s.query, text: s.name }), describeQuery(s.query),
          s.schedule ? scheduleText(s.schedule) : '—',
          el('span', { class: 'row' }, s.schedule ? sendNow(s) : null,
            confirmButton('Delete', 'Delete saved report ' + s.name + '?', async () => { await api('DELETE', '/api/v1/saved-reports/' + s.id); render(); }))]),
          'No saved report yet.'))), refresh());
  });

  // reportKeysForm chooses the install's report keys (the team's, with
  // campaigns:write): the key-values reports count by value, applied on
  // every instance at once — no restart.
  function reportKeysForm(render) {
    if (!can('campaigns:write') || asAdvertiser() || asPublisher()) return null;
    const keys = el('input', { name: 'keys', value: (session.reportKeys || []).join(', '), placeholder: 'section, pos', autocomplete: 'off' });
    const note = el('span', { class: 'muted', 'aria-live': 'polite' });
    const form = el('form', { id: 'report-keys', class: 'row' }, field('Report keys', keys, 'keys', 'Up to 3 key-value keys, comma-separated.'), el('button', { text: 'Save keys' }), note);
    form.addEventListener('submit', async e => {
      e.preventDefault();
      try {
        const d = await api('PUT', '/api/v1/settings/report-keys', { keys: keys.value.split(',').map(k => k.trim()).filter(Boolean) });
        session.reportKeys = d.keys;
        render();
      } catch (err) { showProblems(form, err); }
    });
    return el('section', {}, el('h2', { text: 'Key-value reports' }),
      el('p', { class: 'muted', text: 'Reports count the values of these keys (by ad, campaign and placement: the kv.KEY dimensions above). A change applies on every instance at once: decisions made from then on are counted by the new keys; what was counted by a key you drop stays.' }),
      form);
  }

  // describeQuery says what a saved report's query shows, in words.
  function describeQuery(query) {
    const q = new URLSearchParams(query);
    const by = (q.get('by') || '').split(',').filter(Boolean).map(d => d.startsWith('kv.') ? 'the key ' + d.slice(3) : d === 'traffic' ? 'traffic (people or invalid)' : d);
    const gran = { day: 'day by day', month: 'month by month' }[q.get('granularity')] || 'in total';
    const filters = [...q.entries()].filter(([k]) => !['by', 'granularity', 'from', 'to', 'tz', 'format', 'limit'].includes(k)).map(([k, v]) => k + ' ' + v);
    return (by.length ? 'By ' + by.join(', then ') : 'Totals') + ', ' + gran + (filters.length ? '; only ' + filters.join(', ') : '');
  }
  // scheduleText says when and to whom a saved report is emailed.
  const scheduleText = sc => ({ daily: 'Every day', weekly: 'Every ' + ((sc.weekday || 'monday')[0].toUpperCase() + (sc.weekday || 'monday').slice(1)),
    monthly: 'On day ' + (sc.monthDay || 1) + ' of every month' }[sc.every] || sc.every) +
    ' at ' + (sc.at || '06:00') + ' (' + (sc.timeZone || 'UTC') + ') to ' + sc.to.join(', ') + ', as ' + (sc.format || 'csv').toUpperCase();
  // sendNow emails a saved report's last period now (the server's -smtp).
  function sendNow(s) {
    const note = el('span', { class: 'muted', 'aria-live': 'polite' });
    return el('span', {}, el('button', { type: 'button', text: 'Send now', 'data-send': s.id, onclick: async () => {
      note.textContent = ' Sending…';
      try {
        const d = await api('POST', '/api/v1/saved-reports/' + s.id + '/send');
        note.textContent = ' ' + (d.status === 'sent' ? 'Sent.' : 'Not sent: ' + (d.error || d.status));
      } catch (e) { note.textContent = ' Not sent: ' + e.message; }
    } }), note);
  }

  // ---- Reports of one ad or link.
  async function reportSection(kind, id, q, base, extra = '') {
    const path = { ad: '/api/v1/ad/', link: '/api/v1/links/', campaign: '/api/v1/campaigns/', advertiser: '/api/v1/advertisers/', placement: '/api/v1/placements/' }[kind] +
      encodeURIComponent(id) + '/stats';
    const rg = rangeOf(q);
    const whereFrom = kind === 'ad' || kind === 'link';
    const [all, byCountry, byPlatform, byReferrer, byBrowser, byOS] = await Promise.all([api('GET', path + statsQuery(rg, extra)),
      api('GET', path + statsQuery(rg, extra + '&by=country')), api('GET', path + statsQuery(rg, extra + '&by=platform')),
      ...(whereFrom ? ['referrer', 'browser', 'os'].map(by => api('GET', path + statsQuery(rg, extra + '&by=' + by))) : [])]);
    // A video or audio ad's player errors, by VAST's code (read only when it has some).
    const byError = kind === 'ad' && all.totals.errors > 0 ? await api('GET', path + statsQuery(rg, extra + '&by=errorCode')) : null;
    const top = (rows, k, label) => el('div', {}, el('h2', { text: label }), table([label.replace(/^(Top|By) /, ''), { t: 'Impressions', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'Conversions', num: 1 }],
      (rows || []).slice(0, 10).map(r => [r[k], num(r.impressions), num(r.clicks), num(r.conversions)]), 'Nothing counted in these days.'));
    const bd = (rows, k) => table([k === 'country' ? 'Country' : 'Platform', { t: 'Impressions', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'Conversions', num: 1 }, { t: 'CTR', num: 1 }],
      (rows || []).map(r => [k === 'country' ? countryName(r.country) + ' (' + r.country + ')' : r.platform, num(r.impressions), num(r.clicks), num(r.conversions), pct(r.ctr)]), 'Nothing counted in this range.');
    return el('section', { 'aria-label': 'Report' }, el('h2', { text: 'Report' }), rangePicker(q, base), tiles(all.totals, null),
      all.goal ? el('p', { id: 'goal' }, 'Goal: ', progressBar(all.goal), ' — ' + num(all.goal.delivered) + ' verified ' + all.goal.metric + ' over the whole flight' +
        (all.goal.expectedByNow !== undefined ? ', ' + num(all.goal.expectedByNow) + ' expected by now' : '') + ' (whatever the range above).') : null,
      all.spend !== undefined ? el('p', { id: 'spend', text: 'Spend in this range: ' + money(all.spend) + (kind === 'advertiser' ? ' (its campaigns\' prices)' : '') }) : null,
      invalidNote(all), chart(all, 'Over time'), refresh(),
      el('p', {}, el('a', { href: path + statsQuery(rg, '&format=csv'), download: kind + '-' + id + '.csv', id: 'csv', text: 'Download CSV' })),
      el('div', { class: 'grid2' }, el('div', {}, el('h2', { text: 'By country' }), bd(byCountry.breakdown, 'country')),
        el('div', {}, el('h2', { text: 'By platform' }), bd(byPlatform.breakdown, 'platform'))),
      whereFrom ? el('div', { class: 'grid2', id: 'where-from' }, el('div', { id: 'top-referrers' }, top(byReferrer.breakdown, 'referrer', 'Top referrers')),
        el('div', {}, top(byBrowser.breakdown, 'browser', 'By browser'), top(byOS.breakdown, 'os', 'By OS'))) : null,
      whereFrom ? el('p', { class: 'muted', text: 'Referrers, browsers and systems are counted by whole days.' }) : null,
      byError ? el('div', { id: 'player-errors' }, el('h2', { text: 'Player errors' }),
        table(['VAST error code', { t: 'Errors', num: 1 }], (byError.breakdown || []).map(r => [vastError(r.errorCode), num(r.errors)]), 'No error in these days.'),
        el('p', { class: 'muted', text: 'The errors players reported with the ad\'s Error URL, by whole days. "none": the player sent no code; "other": a code outside VAST\'s 100–999.' })) : null);
  }
  // vastError names a VAST error code (VAST 4.2, section 2.3.6.3) for people.
  const vastErrors = { 100: 'XML parsing error', 101: 'schema validation error', 102: 'version not supported', 200: 'trafficking error', 201: 'linearity not expected',
    202: 'duration not expected', 203: 'size not expected', 204: 'ad category required', 205: 'inline category violates wrapper blocked categories', 206: 'ad break shortened',
    300: 'wrapper error', 301: 'wrapper timeout', 302: 'wrapper limit reached', 303: 'no ads after wrappers', 304: 'inline ad display timed out',
    400: 'linear ad error', 401: 'media file not found', 402: 'media file timeout', 403: 'no supported media file', 405: 'problem displaying the media file',
    406: 'mezzanine required', 407: 'mezzanine being downloaded', 408: 'conditional ad rejected', 409: 'interactive unit not executed', 410: 'verification unit not executed',
    411: 'mezzanine not as specified', 500: 'non-linear ad error', 600: 'companion ad error', 900: 'undefined error', 901: 'VPAID error', 902: 'interactive creative file error' };
  const vastError = code => vastErrors[code] ? code + ' — ' + vastErrors[code] : code;

  // ---- Countries.
  const names = (() => { try { return new Intl.DisplayNames(['en'], { type: 'region' }); } catch (_) { return null; } })();
  const countryName = c => { try { return (names && names.of(c)) || c; } catch (_) { return c; } };

  // ---- Ads.
  // adFigures maps ad ids to their last 7 days' figures (the 1,000 most
  // seen: one report read at most every 30 s; null for a role without
  // reports).
  let adFig = null, adFigAt = 0;
  function adFigures() {
    if (!can('reports:read')) return null;
    if (!adFig || Date.now() - adFigAt > 30000) {
      adFigAt = Date.now();
      adFig = api('GET', '/api/v1/stats' + statsQuery(rangeOf(new URLSearchParams('range=7d')), '&top=ads&limit=1000'))
        .then(r => new Map((r.top || []).map(t => [t.id, t]))).catch(() => null);
    }
    return adFig;
  }
  const stateOf = (a, now = Date.now()) => ({ pending: 'waiting for approval, ', draft: 'rejected, ', paused: 'paused, ' }[a.state] || '') +
    (Date.parse(a.endAt) <= now ? 'expired' : Date.parse(a.startAt) >= now ? 'scheduled' : 'active');
  route(/^\/ads$/, 'ads:read', async (_, q) => {
    const state = q.get('state') || '', text = q.get('q') || '', offset = +q.get('offset') || 0, limit = 50;
    const stateSel = el('select', {}, [['', 'Every state'], ['active', 'Active'], ['scheduled', 'Scheduled'], ['expired', 'Expired']]
      .map(([v, t]) => el('option', { value: v, text: t, selected: v === state })));
    const search = el('input', { type: 'search', value: text, placeholder: 'Titles starting with…', autocomplete: 'off' });
    const results = el('div', { 'aria-live': 'polite' });
    const hash = (o = 0) => '#/ads?state=' + stateSel.value + '&q=' + encodeURIComponent(search.value) + (o ? '&offset=' + o : '');
    let seq = 0, timer = 0;
    const load = async (o) => {
      const mine = ++seq;
      results.replaceChildren(el('p', { class: 'loading', text: 'Loading…' }));
      let page;
      try {
        page = await api('GET', '/api/v1/ads?limit=' + limit + '&offset=' + o + '&state=' + stateSel.value + '&q=' + encodeURIComponent(search.value));
      } catch (e) { if (mine === seq && !(e instanceof Stale)) results.replaceChildren(errorBox(e)); return; }
      if (mine !== seq) return; // a newer keystroke's answer wins
      if (here().path === '/ads') history.replaceState(null, '', hash(o));
      const now = Date.now(), [cn, stats] = await Promise.all([campaignNames(), adFigures()]);
      if (mine !== seq) return;
      const fig = a => { const t = stats && stats.get(String(a.id)) || { impressions: 0, clicks: 0 }; return [num(t.impressions), num(t.clicks), t.impressions ? pct(t.ctr) : '—']; };
      results.replaceChildren(table(['Id', 'Title', 'Campaign', 'State', ...(stats ? [{ t: 'Impressions (7 days)', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'CTR', num: 1 }] : []),
        'Starts', 'Ends'], page.items.map(a => [String(a.id),
        el('a', { href: '#/ads/' + a.id, text: a.title }),
        a.campaignId ? campaignLink(a.campaignId, cn) : el('span', { class: 'muted', text: 'none: ad list only' }),
        stateOf(a, now), ...(stats ? fig(a) : []), fmtTime(a.startAt), fmtTime(a.endAt)]),
      search.value ? 'No ad title starts with "' + search.value + '".' : 'No ads yet.'),
      el('div', { class: 'pager' }, el('span', { class: 'muted', text: page.total ? (o + 1) + '–' + (o + page.items.length) + ' of ' + num(page.total) + (page.totalCapped ? '+' : '') : '' }),
        o > 0 ? el('button', { type: 'button', text: 'Previous', onclick: () => load(Math.max(0, o - limit)) }) : null,
        o + limit < page.total ? el('button', { type: 'button', text: 'Next', onclick: () => load(o + limit) }) : null));
    };
    search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => load(0), 200); });
    stateSel.addEventListener('change', () => load(0));
    show(el('div', { class: 'row' }, el('h1', { text: 'Ads' }), can('ads:write') ? el('a', { href: '#/ads/new', class: 'button', id: 'new-ad', text: 'New ad' }) : null),
      el('div', { class: 'row' }, field('State', stateSel), field('Search', search)), results);
    await load(offset);
  });

  route(/^\/ads\/(\d+)$/, 'ads:read', async ([id], q) => {
    const a = await api('GET', '/api/v1/ad/' + id);
    const write = can('ads:write');
    // Its campaign: its name, and its targeting, which the ad's narrows.
    const camp = a.campaignId && can('campaigns:read') ? await api('GET', '/api/v1/campaigns/' + a.campaignId).catch(() => null) : null;
    const adMove = (label, verb) => el('button', { type: 'button', id: 'ad-' + verb, text: label, onclick: async () => {
      try { await api('POST', '/api/v1/ad/' + id + '/' + verb); render(); } catch (e) { main().prepend(errorBox(e)); }
    } });
    const out = [el('h1', { text: a.title }),
      el('p', { class: 'muted', text: 'Ad ' + a.id + ' · ' + stateOf(a) + ' · ' + fmtTime(a.startAt) + ' → ' + fmtTime(a.endAt) }),
      // Approval of an advertiser's creative.
      a.state && a.state !== 'active' && a.state !== 'paused' ? el('div', { class: 'row', id: 'ad-approval' }, el('p', { text: a.state === 'pending' ? 'Waiting for approval: it serves once approved.' :
        'Rejected' + (a.review ? ' by ' + a.review.by + ': ' + a.review.reason : '') + '. It serves once approved; a change sends it for approval again.' }),
        can('campaigns:approve') ? adMove('Approve', 'approve') : null,
        a.state === 'pending' && can('campaigns:approve') ? rejectForm(id, render, '/api/v1/ad/') : null) : null,
      write && (a.state === 'active' || a.state === 'paused') ? el('div', { class: 'row' }, a.state === 'active' ? adMove('Pause this ad', 'pause') : adMove('Resume this ad', 'resume'),
        el('span', { class: 'muted', text: a.state === 'paused' ? ' Paused: its campaign serves its other ads.' : '' })) : null,
      write ? el('div', { class: 'row' }, el('a', { href: '#/ads/' + id + '/edit', class: 'button', id: 'edit', text: 'Edit' }), ' ',
        el('a', { href: '#/ads/new?from=' + id, class: 'button', id: 'duplicate', text: 'Duplicate' }), ' ',
        confirmButton('Delete', 'Delete this ad? Its reports stay.', async () => {
          try { await api('DELETE', '/api/v1/ad/' + id); go('#/ads'); } catch (e) { main().prepend(errorBox(e)); }
        })) : null,
      el('div', { class: 'card' }, el('h2', { text: 'Targeting' }), a.conditions && a.conditions.length ?
        el('ul', {}, a.conditions.map(c => el('li', { text: describe(c) }))) : el('p', { id: 'ad-targeting', text: camp ? 'The ad adds no targeting of its own.' : 'Everyone.' }),
        camp ? el('p', { id: 'campaign-targeting', text: 'Its campaign serves ' + (camp.conditions.length ? camp.conditions.map(describe).join(' OR ') : 'everyone') +
          (camp.keywords.length ? ', with a keyword of ' + camp.keywords.join(', ') : '') + (a.conditions && a.conditions.length ? '; the ad only those its own conditions take too.' : '.') }) : null,
      a.url ? el('p', {}, 'Landing page: ', el('a', { href: a.url, rel: 'noreferrer', text: a.url })) : null,
      a.link ? el('p', {}, 'Tracking link: ', el('a', { href: '#/links/' + encodeURIComponent(a.link.code), text: a.link.path })) : null,
      a.campaignId ? el('p', {}, 'Campaign: ', el('a', { href: '#/campaigns/' + a.campaignId, text: camp ? camp.name : 'campaign ' + a.campaignId }),
        a.placements ? ' · placements ' + a.placements.join(', ') : '') :
        el('p', { id: 'no-campaign', text: 'No campaign: an ad of the ad list (GET /api/v1/ad), which decisions serve only as a placement\'s default ad.' }),
      a.creative ? el('p', { id: 'creative-summary', text: 'Creative: ' + a.creative.type + (a.creative.width ? ', ' + a.creative.width + '×' + a.creative.height + ' px' : '') }) : null)];
    if (can('reports:read')) out.push(await reportSection('ad', id, q, '#/ads/' + id));
    show(...out);
  });
  const describe = c => [c.ageStart || c.ageEnd ? 'age ' + (c.ageStart || 1) + '–' + (c.ageEnd || 100) : '', (c.gender || []).join('/'),
    (c.country || []).join(', '), (c.platform || []).join('/')].filter(Boolean).join(' · ') || 'everyone';

  route(/^\/ads\/new$/, 'ads:write', async (_, q) => {
    let base = null;
    if (q.get('from')) base = await api('GET', '/api/v1/ad/' + q.get('from'));
    base = base ? { ...base, title: base.title + ' (copy)' } : {};
    if (q.get('campaign')) base.campaignId = q.get('campaign');
    await adEditor(null, base);
  });
  route(/^\/ads\/(\d+)\/edit$/, 'ads:write', async ([id]) => adEditor(id, await api('GET', '/api/v1/ad/' + id)));

  async function adEditor(id, a) {
    a = a || {};
    // Beyond the original contract: the campaign, placements and creative
    // (offered to a role that may read campaigns).
    // (an advertiser's account lists its campaigns, not the placements: those are the publishers')
    const [camps, places] = can('campaigns:read') ? await Promise.all([api('GET', '/api/v1/campaigns?limit=1000'), asAdvertiser() ? null : api('GET', '/api/v1/placements?limit=1000')]) : [null, null];
    const campaign = camps ? el('select', {}, [['', 'No campaign'], ...camps.items.filter(c => c.state !== 'archived').map(c => [c.id, c.name + (c.state === 'active' ? '' : ' (' + c.state + ')')])].map(([v, t]) => el('option', { value: v, text: t, selected: String(a.campaignId || '') === v }))) : null;
    const placements = places ? el('div', { class: 'checks', role: 'group', 'aria-label': 'Placements' },
      places.items.map(p => el('label', {}, el('input', { type: 'checkbox', value: p.name, checked: (a.placements || []).includes(p.name) }), p.name))) : null;
    const creative = camps ? creativeEditor(a.creative) : null;
    const title = el('input', { type: 'text', value: a.title || '', required: true, maxlength: 256 });
    const start = localInput(a.startAt || new Date().toISOString()), end = localInput(a.endAt || new Date(Date.now() + 30 * day).toISOString());
    const url = el('input', { type: 'url', value: a.url || '', placeholder: 'https://…' });
    const conds = el('div', { id: 'conditions' });
    const addCond = c => conds.append(condEditor(c || {}, conds));
    (a.conditions || []).forEach(addCond);
    const form = el('form', { class: 'card', id: 'ad-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const body = { title: title.value, startAt: fromLocal(start.value), endAt: fromLocal(end.value),
        conditions: [...conds.children].map(c => c.read()) };
      if (url.value) body.url = url.value;
      if (campaign && campaign.value) body.campaignId = campaign.value;
      const chosen = placements ? [...placements.querySelectorAll('input:checked')].map(i => i.value) : [];
      if (chosen.length) body.placements = chosen;
      const cr = creative && creative.read();
      if (cr) body.creative = cr;
      const btn = form.querySelector('button[type=submit]');
      btn.disabled = true;
      try {
        const r = id ? await api('PUT', '/api/v1/ad/' + id, body) : await api('POST', '/api/v1/ad', body);
        if (r.warnings && Object.keys(r.warnings).length) { // saved: say what is amiss beside its field, on the ad's editor
          savedWarnings = { id: String(id || r.id), warnings: r.warnings };
          if (id) render(); else go('#/ads/' + r.id + '/edit');
          return;
        }
        go('#/ads/' + (id || r.id));
      } catch (e) { btn.disabled = false; showProblems(form, e); }
    } },
    field('Title', title, 'title'), el('div', { class: 'grid2' }, field('Starts (your time)', start, 'startAt'), field('Ends (your time)', end, 'endAt')),
    field('Landing page (optional: gives the ad a tracking link)', url, 'url'),
    campaign ? el('div', { class: 'grid2' }, field(asAdvertiser() ? 'Campaign' : 'Campaign (optional)', campaign, 'campaignId'),
      placements ? field('Limited to placements (none: any)', placements, 'placements') : null) : null,
    creative,
    el('div', { 'data-field': 'conditions', class: 'field' }, el('h2', { text: 'Targeting' }),
      el('p', { class: 'muted', text: 'A viewer matches when any condition matches; no condition matches everyone.' }), conds,
      el('button', { type: 'button', id: 'add-condition', text: 'Add a condition', onclick: () => addCond({}) })),
    el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary', text: id ? 'Save' : 'Create ad' }),
      el('a', { href: id ? '#/ads/' + id : '#/ads', text: 'Cancel' })));
    show(el('h1', { text: id ? 'Edit ad ' + id : 'New ad' }), form);
    title.focus();
    if (id && savedWarnings && savedWarnings.id === String(id)) {
      showWarnings(form, savedWarnings.warnings, '#/ads/' + id);
      savedWarnings = null;
    }
  }

  function condEditor(c, list) {
    const box = el('fieldset', { class: 'cond' });
    const idx = () => [...list.children].indexOf(box);
    const ageStart = el('input', { type: 'number', min: 1, max: 100, value: c.ageStart || '' });
    const ageEnd = el('input', { type: 'number', min: 1, max: 100, value: c.ageEnd || '' });
    const checks = (name, opts, on) => el('div', { class: 'checks', role: 'group', 'aria-label': name },
      opts.map(([v, t]) => el('label', {}, el('input', { type: 'checkbox', value: v, checked: (on || []).includes(v) }), t)));
    const gender = checks('Gender', [['M', 'Men'], ['F', 'Women']], c.gender);
    const platform = checks('Platform', [['android', 'Android'], ['ios', 'iOS'], ['web', 'Web']], (c.platform || []).map(p => p.toLowerCase()));
    const chosen = new Set((c.country || []).map(x => x.toUpperCase()));
    const chips = el('div', { class: 'chips', 'aria-label': 'Chosen countries' });
    const listId = nextId('countries');
    const all = (window.MARQUEE_COUNTRIES || []).map(cc => [cc, countryName(cc)]);
    const dl = el('datalist', { id: listId }, all.map(([cc, n]) => el('option', { value: n + ' (' + cc + ')' })));
    const country = el('input', { type: 'text', list: listId, placeholder: 'Type a country, then Enter', autocomplete: 'off', 'aria-label': 'Country to add' });
    const drawChips = () => chips.replaceChildren(...[...chosen].map(cc => el('span', { class: 'chip' }, countryName(cc) + ' (' + cc + ')',
      el('button', { type: 'button', 'aria-label': 'Remove ' + countryName(cc) + ' (' + cc + ')', text: '×', onclick: () => { chosen.delete(cc); drawChips(); } }))));
    const unknown = el('div', { class: 'problem', role: 'alert', hidden: true });
    const pick = () => {
      const v = country.value.trim();
      if (!v) return;
      const m = v.match(/\(([A-Za-z]{2})\)$/) || v.match(/^([A-Za-z]{2})$/);
      const hit = m ? m[1].toUpperCase() : (all.find(([, n]) => n.toLowerCase() === v.toLowerCase()) || [''])[0];
      if (!all.some(([cc]) => cc === hit)) { // only a country of the list becomes a chip
        unknown.textContent = '"' + v + '" is not a country: type a name or a two-letter code and choose it from the list.';
        unknown.hidden = false;
        return;
      }
      unknown.hidden = true;
      chosen.add(hit);
      country.value = '';
      drawChips();
    };
    country.addEventListener('input', () => { unknown.hidden = true; });
    country.addEventListener('keydown', ev => { if (ev.key === 'Enter') { ev.preventDefault(); pick(); } });
    country.addEventListener('keypress', ev => { if (ev.key === 'Enter') ev.preventDefault(); }); // no implicit submit
    country.addEventListener('change', () => { if (/\([A-Z]{2}\)$/.test(country.value)) pick(); });
    drawChips();
    box.read = () => {
      const out = {};
      if (ageStart.value) out.ageStart = +ageStart.value;
      if (ageEnd.value) out.ageEnd = +ageEnd.value;
      const g = [...gender.querySelectorAll('input:checked')].map(i => i.value);
      const p = [...platform.querySelectorAll('input:checked')].map(i => i.value);
      if (g.length) out.gender = g;
      if (p.length) out.platform = p;
      if (chosen.size) out.country = [...chosen];
      return out;
    };
    const n = () => 'conditions[' + idx() + ']';
    const f = (label, input, key) => { const x = field(label, input); x.dataset.key = key; return x; };
    box.append(el('legend', { text: 'Condition' }),
      el('div', { class: 'row' }, f('Age from', ageStart, 'ageStart'), f('Age to', ageEnd, 'ageEnd')),
      f('Gender (none: any)', gender, 'gender'), f('Platforms (none: any)', platform, 'platform'),
      f('Countries (none: any)', el('div', {}, el('div', { class: 'row' }, country,
        el('button', { type: 'button', class: 'add-country', text: 'Add', onclick: pick })), unknown, dl, chips), 'country'),
      el('button', { type: 'button', text: 'Remove this condition', onclick: () => box.remove() }));
    // data-field names follow the condition's position, which moves as others are removed.
    const rename = () => { box.dataset.field = n(); box.querySelectorAll('[data-key]').forEach(x => { x.dataset.field = n() + '.' + x.dataset.key; }); };
    box.addEventListener('focusin', rename);
    list.addEventListener('rename', rename);
    queueMicrotask(rename);
    return box;
  }
  document.addEventListener('submit', ev => { const c = ev.target.querySelector && ev.target.querySelector('#conditions'); if (c) c.dispatchEvent(new Event('rename')); }, true);


  // ---- Targeting trees (docs/targeting.md).
  const reservedKeys = ['$host', '$path', '$referrer', '$site', '$country', '$region', '$city', '$metro', '$device', '$browser', '$os', '$language', '$ip'];
  const treeOps = [['in', 'is one of'], ['notIn', 'is none of'], ['prefix', 'starts with'], ['glob', 'is like'], ['range', 'is between'], ['exists', 'is present'], ['absent', 'is absent']];
  const weekdays = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
  // describeTree says a targeting tree in words.
  function describeTree(t) {
    if (!t) return 'no rules';
    if (t.all) return t.all.map(describeTree).join(' and ');
    if (t.any) return '(' + t.any.map(describeTree).join(' or ') + ')';
    if (t.not) return 'not (' + describeTree(t.not) + ')';
    if (t.dayPart) { const d = t.dayPart; return (d.days && d.days.length ? d.days.join(', ') : 'every day') + ' ' + d.from + '–' + d.to; }
    if (t.gte !== undefined || t.lte !== undefined) return t.key + (t.gte !== undefined ? ' ≥ ' + t.gte : '') + (t.lte !== undefined ? ' ≤ ' + t.lte : '');
    for (const [op, words] of treeOps) if (t[op] !== undefined) return t.key + ' ' + words + (Array.isArray(t[op]) ? ' ' + t[op].join(', ') : '');
    return JSON.stringify(t);
  }
  // flatTree is a tree as rows — a rule, or an all or any of rules and
  // day-parts — or null when it is deeper (it is then edited as JSON).
  function flatTree(t) {
    if (!t) return { join: 'all', rules: [] };
    const isRule = r => r && (r.key || r.dayPart) && !r.all && !r.any && !r.not;
    if (isRule(t)) return { join: 'all', rules: [t] };
    for (const j of ['all', 'any']) if (t[j] && t[j].every(isRule)) return { join: j, rules: t[j] };
    return null;
  }
  // seenValues are the values reports counted last week for each report
  // key (-report-keys), offered in the targeting editor: one read a page.
  async function seenValues() {
    const out = {};
    if (!can('reports:read') || asAdvertiser() || asPublisher()) return out; // GET /api/v1/stats is the team's
    await Promise.all(((session && session.reportKeys) || []).map(async k => {
      try { out[k] = ((await api('GET', '/api/v1/stats?by=kv.' + encodeURIComponent(k))).breakdown || []).map(p => p.value); } catch (_) { out[k] = []; }
    }));
    return out;
  }
  // targetingEditor edits a campaign's or an ad's targeting tree: rows of
  // rules (a key, an operator, values) and day-parts, joined by all or
  // any; a deeper tree (not, any within all) as JSON. read() returns the
  // tree, or undefined for none.
  function targetingEditor(tree, seen) {
    const box = el('div', { id: 'targeting', class: 'field', 'data-field': 'targeting' });
    const rows = el('div', { id: 'targeting-rules' });
    const flat = flatTree(tree);
    const join = el('select', { 'aria-label': 'Rules to meet', id: 'targeting-join' }, [['all', 'every rule'], ['any', 'any rule']].map(([v, t]) => el('option', { value: v, text: t, selected: flat && flat.join === v })));
    const json = el('textarea', { rows: 8, id: 'targeting-json', 'aria-label': 'Targeting tree (JSON)', spellcheck: 'false' });
    json.value = tree ? JSON.stringify(tree, null, 2) : '';
    const keysId = nextId('keys');
    const keys = el('datalist', { id: keysId }, [...((session && session.reportKeys) || []), ...reservedKeys].map(k => el('option', { value: k })));
    const path = i => 'targeting.' + join.value + '[' + i + ']';
    const rename = () => [...rows.children].forEach((r, i) => { r.dataset.field = path(i); });
    function ruleRow(r) {
      const row = el('fieldset', { class: 'cond rule' });
      if (r.dayPart) {
        const d = r.dayPart;
        const days = el('div', { class: 'row' }, weekdays.map(w => el('label', {}, el('input', { type: 'checkbox', value: w, checked: (d.days || []).includes(w) }), ' ' + w)));
        const from = el('input', { type: 'time', value: d.from || '08:00', 'aria-label': 'From' }), to = el('input', { type: 'time', value: d.to === '24:00' ? '23:59' : d.to || '20:00', 'aria-label': 'To' });
        row.read = () => {
          const out = { dayPart: { from: from.value, to: to.value === '23:59' ? '24:00' : to.value } };
          const ds = [...days.querySelectorAll('input:checked')].map(i => i.value);
          if (ds.length) out.dayPart.days = ds;
          return out;
        };
        row.append(el('legend', { text: 'Day-part (days none: every day; to 23:59 is the end of the day)' }), days, el('div', { class: 'row' }, from, to));
      } else {
        const key = el('input', { type: 'text', list: keysId, value: r.key || '', placeholder: 'section or $device', 'aria-label': 'Key' });
        const cur = r.gte !== undefined || r.lte !== undefined ? 'range' : (treeOps.find(([o]) => r[o] !== undefined) || ['in'])[0];
        const op = el('select', { 'aria-label': 'Operator' }, treeOps.map(([v, t]) => el('option', { value: v, text: t, selected: v === cur })));
        const valsId = nextId('vals');
        const vals = el('input', { type: 'text', list: valsId, 'aria-label': 'Values (comma-separated)',
          value: cur === 'range' ? [r.gte ?? '', r.lte ?? ''].join(',') : Array.isArray(r[cur]) ? r[cur].join(', ') : '', placeholder: 'sports, news' });
        const offer = el('datalist', { id: valsId });
        const fill = () => offer.replaceChildren(...(seen[key.value.trim().toLowerCase()] || []).map(v => el('option', { value: v })));
        key.addEventListener('input', fill);
        fill();
        row.read = () => {
          const out = { key: key.value.trim() }, list = vals.value.split(',').map(v => v.trim()).filter(Boolean);
          if (op.value === 'exists' || op.value === 'absent') out[op.value] = true;
          else if (op.value === 'range') {
            const [lo, hi] = vals.value.split(',').map(v => v.trim());
            if (lo) out.gte = +lo;
            if (hi) out.lte = +hi;
          } else out[op.value] = list;
          return out;
        };
        row.append(el('legend', { text: 'Rule' }), el('div', { class: 'row' }, key, op, vals), offer);
      }
      row.append(el('button', { type: 'button', text: 'Remove', onclick: () => { row.remove(); rename(); } }));
      rows.append(row);
      rename();
    }
    (flat ? flat.rules : []).forEach(ruleRow);
    join.addEventListener('change', rename);
    const simple = el('div', { id: 'targeting-simple' }, el('div', { class: 'row' }, el('span', { text: 'Serve where' }), join, el('span', { text: 'takes the request:' })), rows,
      el('div', { class: 'row' }, el('button', { type: 'button', id: 'add-rule', text: 'Add a rule', onclick: () => ruleRow({ key: '', in: [] }) }),
        el('button', { type: 'button', id: 'add-daypart', text: 'Add a day-part', onclick: () => ruleRow({ dayPart: {} }) })));
    const asJSON = el('div', { id: 'targeting-as-json', hidden: !!flat }, json,
      el('div', { class: 'muted', text: 'all, any and not over rules, up to 4 deep: docs/targeting.md.' }));
    const toggle = el('button', { type: 'button', id: 'targeting-toggle', text: flat ? 'Edit as JSON' : 'Edit as rules', onclick: () => {
      if (asJSON.hidden) { json.value = JSON.stringify(box.read() || null, null, 2); asJSON.hidden = false; simple.hidden = true; toggle.textContent = 'Edit as rules'; return; }
      let t;
      try { t = json.value.trim() ? JSON.parse(json.value) : null; } catch (_) { return; }
      const f = flatTree(t);
      if (!f) return; // deeper than rows: stays JSON
      rows.replaceChildren(); join.value = f.join; f.rules.forEach(ruleRow);
      asJSON.hidden = true; simple.hidden = false; toggle.textContent = 'Edit as JSON';
    } });
    simple.hidden = !flat;
    box.read = () => {
      if (!asJSON.hidden) {
        if (!json.value.trim()) return undefined;
        try { return JSON.parse(json.value); } catch (_) { return json.value; } // the API names what is wrong
      }
      const rules = [...rows.children].map(r => r.read());
      return rules.length ? { [join.value]: rules } : undefined;
    };
    box.append(el('h2', { text: 'Targeting rules' }), el('p', { class: 'muted', text: 'Key-values, page context ($host, $path, $site), geo ($region, $city), device ($device, $browser, $os, $language), addresses ($ip) and day-parts. Keys and values are case-insensitive.' }),
      keys, simple, asJSON, toggle);
    return box;
  }

  // ---- Campaigns, advertisers, placements (campaigns:read; changes need campaigns:write).
  const tiers = ['sponsorship', 'standard', 'remnant', 'house']; // marquee.Priorities (console_test)
  const dateOnly = iso => iso ? new Date(iso).toLocaleDateString() : '—';
  // progressBar draws a goal's progress and its pacing status.
  function progressBar(g) {
    if (!g) return el('span', { class: 'muted', text: 'no goal' });
    const p = Math.round(100 * g.progress);
    return el('span', { class: 'progress', 'data-status': g.status },
      el('progress', { max: 100, value: p, 'aria-label': 'Goal progress' }), ' ' + p + '% · ' + g.status);
  }
  const goalText = g => g ? num(g.total || g.daily) + ' ' + g.metric + (g.total ? ' in all' : ' a day') + (g.total && g.daily ? ', ' + num(g.daily) + ' a day' : '') : 'none';
  // listPage draws a searchable, filtered, paged list of an API list route.
  async function listPage({ title, path, hash, q, states, head, row, empty, newHref, newId, extra, bulk }) {
    const state = q.get('state') || '', text = q.get('q') || '', offset = +q.get('offset') || 0, limit = 20;
    const search = el('input', { type: 'search', value: text, placeholder: 'Names starting with…', autocomplete: 'off' });
    const stateSel = states ? el('select', {}, [['', 'Every state'], ...states.map(s => [s, s[0].toUpperCase() + s.slice(1)])]
      .map(([v, t]) => el('option', { value: v, text: t, selected: v === state }))) : null;
    const results = el('div', { 'aria-live': 'polite' });
    let seq = 0, timer = 0, at = offset;
    const bar = bulk ? bulk(() => [...results.querySelectorAll('input.pick:checked')].map(x => x.value), () => load(at)) : null;
    const load = async o => {
      const mine = ++seq;
      let page;
      const qs = '?limit=' + limit + '&offset=' + o + '&q=' + encodeURIComponent(search.value) + (stateSel && stateSel.value ? '&state=' + stateSel.value : '') + (extra || '');
      try { page = await api('GET', path + qs); } catch (e) { if (mine === seq && !(e instanceof Stale)) results.replaceChildren(errorBox(e)); return; }
      if (mine !== seq) return;
      let rows = await Promise.all(page.items.map(row));
      if (mine !== seq) return;
      const cols = bulk ? [{ t: 'Select' }, ...head] : head;
      if (bulk) rows = rows.map((r, i) => [el('input', { type: 'checkbox', class: 'pick', value: page.items[i].id, 'aria-label': 'Select ' + page.items[i].name }), ...r]);
      at = o;
      results.replaceChildren(table(cols, rows, search.value ? 'Nothing starts with "' + search.value + '".' : empty),
        el('div', { class: 'pager' }, el('span', { class: 'muted', text: page.total ? (o + 1) + '–' + (o + page.items.length) + ' of ' + num(page.total) : '' }),
          o > 0 ? el('button', { type: 'button', text: 'Previous', onclick: () => load(Math.max(0, o - limit)) }) : null,
          o + limit < page.total ? el('button', { type: 'button', text: 'Next', onclick: () => load(o + limit) }) : null));
    };
    search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => load(0), 200); });
    if (stateSel) stateSel.addEventListener('change', () => load(0));
    show(el('div', { class: 'row' }, el('h1', { text: title }), newHref && (can('campaigns:write') || newId === 'new-campaign' && mayDraft()) ? el('a', { href: newHref, class: 'button', id: newId, text: 'New' }) : null),
      el('div', { class: 'row' }, field('Search', search), stateSel ? field('State', stateSel) : null), bar, results);
    await load(offset);
  }

  // Advertisers.
  route(/^\/advertisers$/, 'campaigns:read', async (_, q) => {
    await listPage({ title: 'Advertisers', path: '/api/v1/advertisers', q, states: ['active', 'archived'], newHref: '#/advertisers/new', newId: 'new-advertiser',
      head: ['Name', 'State', 'Since'], empty: 'No advertisers yet.',
      row: a => [el('a', { href: '#/advertisers/' + a.id, text: a.name }), a.state, dateOnly(a.createdAt)] });
  });
  route(/^\/advertisers\/new$/, 'campaigns:write', async () => advertiserEditor(null, {}));
  route(/^\/advertisers\/(\d+)\/edit$/, 'campaigns:write', async ([id]) => advertiserEditor(id, await api('GET', '/api/v1/advertisers/' + id)));
  function advertiserEditor(id, a) {
    const name = el('input', { type: 'text', value: a.name || '', maxlength: 200, required: true });
    const notes = el('textarea', { rows: 3, 'aria-label': 'Notes' });
    notes.value = a.notes || '';
    const bu = a.budget || {};
    const budgetDaily = el('input', { type: 'number', min: 0, step: 'any', id: 'advertiser-budget-daily', value: bu.daily === undefined ? '' : bu.daily });
    const budgetTotal = el('input', { type: 'number', min: 0, step: 'any', id: 'advertiser-budget-total', value: bu.total === undefined ? '' : bu.total });
    const tz = el('input', { type: 'text', value: a.timeZone || '', placeholder: 'UTC', id: 'advertiser-time-zone' });
    // Prepaid is chosen when the advertiser is made (docs/api.md#prepaid-balances).
    const prepaid = el('input', { type: 'checkbox', id: 'advertiser-prepaid', checked: !!a.prepaid, disabled: !!id });
    const form = el('form', { class: 'card', id: 'advertiser-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const body = { name: name.value, notes: notes.value, prepaid: prepaid.checked };
      if (budgetDaily.value !== '' || budgetTotal.value !== '') {
        body.budget = {};
        if (budgetDaily.value !== '') body.budget.daily = budgetDaily.value;
        if (budgetTotal.value !== '') body.budget.total = budgetTotal.value;
      }
      if (tz.value.trim()) body.timeZone = tz.value.trim();
      try {
        const r = await api(id ? 'PUT' : 'POST', '/api/v1/advertisers' + (id ? '/' + id : ''), body);
        go('#/advertisers/' + r.id);
      } catch (e) { showProblems(form, e); }
    } }, field('Name', name, 'name'), field('Notes', notes, 'notes'),
    el('fieldset', { class: 'cond', 'data-field': 'budget' }, el('legend', { text: 'Budget over all its campaigns' }),
      el('div', { class: 'row' }, field('A day (' + currency() + ')', budgetDaily, 'budget.daily'), field('In all (' + currency() + ')', budgetTotal, 'budget.total'),
        field('Time zone of its days (IANA; none: UTC)', tz, 'timeZone'))),
    field('Prepaid: pays up front by card and its campaigns stop when its balance is spent' + (id ? ' (chosen when it was created)' : ''), prepaid, 'prepaid'),
    el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary', text: id ? 'Save' : 'Create advertiser' }),
      el('a', { href: id ? '#/advertisers/' + id : '#/advertisers', text: 'Cancel' })));
    show(el('h1', { text: id ? 'Edit ' + a.name : 'New advertiser' }), form);
    name.focus();
  }
  route(/^\/advertisers\/(\d+)$/, 'campaigns:read', async ([id], q) => {
    const [a, cs] = await Promise.all([api('GET', '/api/v1/advertisers/' + id), api('GET', '/api/v1/campaigns?limit=100&advertiserId=' + id)]);
    const write = can('campaigns:write') && a.state === 'active';
    const out = [el('h1', { text: a.name }), el('p', { class: 'muted', text: 'Advertiser ' + a.id + ' · ' + a.state + (a.notes ? ' · ' + a.notes : '') +
      (a.budget ? ' · budget ' + budgetText(a.budget) + (a.timeZone ? ' (days in ' + a.timeZone + ')' : '') : '') }),
      write ? el('div', { class: 'row' }, el('a', { href: '#/advertisers/' + id + '/edit', class: 'button', id: 'edit', text: 'Edit' }),
        el('a', { href: '#/campaigns/new?advertiser=' + id, class: 'button', id: 'new-campaign', text: 'New campaign' }),
        confirmButton('Archive', 'Archive ' + a.name + '? Its reports stay; its name becomes free. (Archive its campaigns first.)', async () => {
          try { await api('DELETE', '/api/v1/advertisers/' + id); render(); } catch (e) { main().prepend(errorBox(e)); }
        })) : null,
      !write && asAdvertiser() && mayDraft() && a.state === 'active' ? el('div', { class: 'row' }, el('a', { href: '#/campaigns/new?advertiser=' + id, class: 'button', id: 'new-campaign', text: 'New draft campaign' })) : null,
      a.prepaid && can('reports:read') ? await prepaidBalance(a, q) : null,
      can('conversions:write') && a.state === 'active' ? conversionSecretButton(a) : null,
      can('conversions:write') && a.state === 'active' ? await postbackKeys(a) : null,
      el('h2', { text: 'Campaigns' }), table(['Name', ...(asAdvertiser() ? [] : ['Tier']), 'State', 'Flight'], cs.items.map(c => [el('a', { href: '#/campaigns/' + c.id, text: c.name }),
        ...(asAdvertiser() ? [] : [c.priority]), c.state, dateOnly(c.startAt) + ' → ' + dateOnly(c.endAt)]), 'No campaigns yet.')];
    if (can('reports:read')) out.push(await reportSection('advertiser', id, q, '#/advertisers/' + id));
    show(...out);
  });

  // ---- Money: deals, sites, invoices and statements, an advertiser's
  // conversion secret (docs/api.md#deals, #sites-and-publishers-revenue,
  // #invoices, #publishers-statements, #conversions).
  const dayInput = (d) => { const i = el('input', { type: 'date' }); if (d) i.value = d.toISOString().slice(0, 10); return i; };
  const utcDay = v => v ? v + 'T00:00:00Z' : '';
  const monthBefore = () => { const n = new Date(); return [new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth() - 1, 1)), new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth(), 1))]; };
  // docLinks are a document's downloads.
  const docLinks = (kind, d) => el('span', {}, el('a', { href: '/api/v1/' + kind + '/' + d.id + '?format=pdf', text: 'PDF' }), ' · ',
    el('a', { href: '/api/v1/' + kind + '/' + d.id + '?format=csv', text: 'CSV' }));

  route(/^\/deals$/, 'campaigns:read', async () => {
    const list = await api('GET', '/api/v1/deals');
    const out = [el('h1', { text: 'Deals' }), el('p', { class: 'muted', text: 'A bid naming a deal serves at its tier only from the bidders it lists, at or above its floor, within its flight; any other bid naming it competes in the open auction.' }),
      table(['Deal id', 'Name', 'Bidders', 'Floor', 'Tier', 'The page\'s bids', 'Flight', ''], list.deals.map(d => [d.id, d.name, d.bidders.join(', '), money(d.floor), d.tier,
        d.clientBids ? 'lifted' : 'open auction',
        (d.startAt ? dateOnly(d.startAt) : '…') + ' → ' + (d.endAt ? dateOnly(d.endAt) : '…'),
        can('campaigns:write') ? confirmButton('Delete', 'Delete deal ' + d.id + '? Bids naming it then compete in the open auction.', async () => {
          try { await api('DELETE', '/api/v1/deals/' + encodeURIComponent(d.id)); render(); } catch (e) { main().prepend(errorBox(e)); }
        }) : '']), 'No deals yet.')];
    if (can('campaigns:write')) {
      const id = el('input', { required: true }), name = el('input', { required: true }), bidders = el('input', { placeholder: 'appnexus, rubicon' }),
        floor = el('input', { type: 'number', min: '0', step: '0.01', value: '0' }), tier = el('select', {}, ['sponsorship', 'standard', 'remnant'].map(t => el('option', { value: t, text: t, selected: t === 'standard' }))),
        start = localInput(null), end = localInput(null), client = el('input', { type: 'checkbox' });
      const form = el('form', { id: 'new-deal' }, el('h2', { text: 'New deal' }), field('Deal id (as bids name it)', id, 'id'), field('Name', name, 'name'),
        field('Bidders (their codes, comma-separated)', bidders, 'bidders'), field('Floor (CPM, ' + currency() + ')', floor, 'floor'), field('Tier', tier, 'tier'),
        field('Lift the page\'s bids', el('label', {}, client, ' client-side header bidding'), 'clientBids', 'Nobody authenticates a bid the page sends: a page can forge one naming this deal. Leave it off unless you trust every page that carries your tag.'),
        field('Starts (optional)', start, 'startAt'), field('Ends (optional)', end, 'endAt'), el('button', { type: 'submit', text: 'Create deal' }));
      form.addEventListener('submit', async ev => {
        ev.preventDefault();
        const body = { id: id.value, name: name.value, bidders: bidders.value.split(',').map(b => b.trim()).filter(Boolean), floor: floor.value || 0, tier: tier.value, clientBids: client.checked };
        if (start.value) body.startAt = fromLocal(start.value);
        if (end.value) body.endAt = fromLocal(end.value);
        try { await api('POST', '/api/v1/deals', body); render(); } catch (e) { showProblems(form, e); }
      });
      out.push(form);
    }
    show(...out);
  });

  // ---- Demand partners (docs/demand.md): OpenRTB buyers each decision
  // asks, with their health on the instance that answers.
  // demandFormats are what a partner may buy (marquee.DemandFormats).
  const demandFormats = ['banner', 'video', 'audio', 'native'];
  route(/^\/demand$/, 'campaigns:read', async () => {
    const list = await api('GET', '/api/v1/demand-partners');
    const health = h => !h ? '—' : (h.paused ? 'paused until ' + fmtTime(h.pausedUntil) + ' · ' : '') + num(h.requests) + ' requests, ' + num(h.bids) + ' bids, ' + num(h.wins) + ' wins' +
      (Object.keys(h.dropped).length ? ' · dropped: ' + Object.entries(h.dropped).map(([k, v]) => k + ' ' + num(v)).join(', ') : '');
    const out = [el('h1', { text: 'Demand' }), el('p', { class: 'muted', text: 'OpenRTB 2.6 buyers each decision asks for bids, within its tmax; their bids compete with your campaigns and the page\'s header bids. Health is this instance\'s since it started.' }),
      el('div', { id: 'partners' }, table(['Partner', 'Endpoint', 'Formats', 'Timeout', 'QPS', 'Adjustment', 'Placements', 'Health', ''], list.partners.map(p => [p.name, p.endpoint, p.formats.join(', '),
        p.timeoutMs + ' ms', p.qps ? num(p.qps) : 'no limit', String(p.bidAdjustment), (p.placements || []).join(', ') || 'all', health(p.health),
        can('campaigns:write') ? confirmButton('Delete', 'Delete partner ' + p.name + '? No request goes to it after.', async () => {
          try { await api('DELETE', '/api/v1/demand-partners/' + encodeURIComponent(p.name)); render(); } catch (e) { main().prepend(errorBox(e)); }
        }) : '']), 'No demand partner yet.'))];
    if (can('campaigns:write')) {
      const name = el('input', { required: true }), endpoint = el('input', { required: true, type: 'url', placeholder: 'https://bid.example/openrtb' }),
        formats = demandFormats.map(f => el('label', {}, el('input', { type: 'checkbox', value: f, checked: f === 'banner' }), ' ' + f)),
        timeout = el('input', { type: 'number', min: '1', max: '2000', value: '200' }), qps = el('input', { type: 'number', min: '0', value: '0' }),
        adj = el('input', { type: 'number', min: '0.01', max: '10', step: '0.01', value: '1' }), placements = el('input', { placeholder: 'home-top, article-side (none: all)' }),
        hName = el('input', { placeholder: 'Authorization' }), hValue = el('input', { type: 'password', autocomplete: 'off' });
      const form = el('form', { id: 'new-partner' }, el('h2', { text: 'New partner' }), field('Name (a bidder code)', name, 'name'), field('Endpoint', endpoint, 'endpoint'),
        field('Formats', el('div', { class: 'checks' }, formats), 'formats'), field('Timeout (ms)', timeout, 'timeoutMs'), field('Requests a second per instance (0: no limit)', qps, 'qps'),
        field('Bid adjustment', adj, 'bidAdjustment'), field('Placements', placements, 'placements'),
        field('A header its requests carry (its credentials: never shown again)', el('div', {}, hName, ' ', hValue), 'headers'), el('button', { type: 'submit', text: 'Create partner' }));
      form.addEventListener('submit', async ev => {
        ev.preventDefault();
        const body = { name: name.value, endpoint: endpoint.value, formats: formats.map(l => l.querySelector('input')).filter(i => i.checked).map(i => i.value),
          timeoutMs: +timeout.value, qps: +qps.value, bidAdjustment: +adj.value, placements: placements.value.split(',').map(p => p.trim()).filter(Boolean) };
        if (hName.value) body.headers = { [hName.value]: hValue.value };
        try { await api('POST', '/api/v1/demand-partners', body); render(); } catch (e) { showProblems(form, e); }
      });
      out.push(form);
    }
    show(...out);
  });

  // sellerTypes are sellers.json's (marquee.SellerTypes), the default first.
  const sellerTypes = ['PUBLISHER', 'INTERMEDIARY', 'BOTH'];
  // adsTxtText says what an ads.txt check found (marquee.AdsTxtStatus).
  const adsTxtText = { authorized: 'authorizes us', notListed: 'does not list us', missing: 'no ads.txt', error: 'could not be read' };
  // siteBadges: a quarantined site's, and the quality alarm of an hour
  // that ended less than two hours ago (-ivt-site-alarm).
  const siteBadges = s => {
    const out = [];
    if (s.quarantined) out.push(el('span', { class: 'badge bad', title: 'Serves, bills nothing and earns its publisher nothing', text: 'quarantined' }));
    const a = s.qualityAlarm;
    if (a && Date.now() - Date.parse(a.to) < 2 * 3600e3) {
      out.push(el('span', { class: 'badge warn', title: Object.entries(a.invalid).map(([k, n]) => k + ': ' + n).join('\n'),
        text: 'invalid ' + Math.round(a.invalidRate * 1000) / 10 + '% (' + new Date(a.from).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) + ' hour; alarm at ' + Math.round(a.threshold * 1000) / 10 + '%)' }));
    }
    return out;
  };
  route(/^\/sites$/, 'campaigns:read', async () => {
    const list = await api('GET', '/api/v1/sites');
    const adsTxt = s => el('a', { href: '/api/v1/sites/' + encodeURIComponent(s.name) + '/ads.txt', text: 'ads.txt line', title: 'What ' + s.name + "'s publisher adds to the ads.txt of each of its domains" });
    const out = [el('h1', { text: asPublisher() ? 'Your sites' : 'Sites' }),
      table(['Site', 'Domains', 'Revenue share', 'Seller id', 'Seller type', 'ads.txt', ''], list.sites.map(s => [el('span', { class: 'site-name' }, s.name, ...siteBadges(s).flatMap(b => [' ', b])), s.domains.join(', ') || 'none: any page may use its placements', Math.round(s.revenueShare * 1e6) / 1e4 + '%',
        s.sellerId, s.sellerType + (s.confidential ? ' (confidential)' : ''),
        el('span', { class: 'ads-txt', title: s.adsTxt ? s.adsTxt.domains.map(d => d.domain + ': ' + (d.line || d.error || adsTxtText[d.status])).join('\n') : '' },
          s.adsTxt ? adsTxtText[s.adsTxt.status] + ' (' + new Date(s.adsTxt.checkedAt).toLocaleString() + ')' : 'not checked yet', ' ',
          el('button', { type: 'button', text: 'Check now', onclick: async () => {
            try { await api('POST', '/api/v1/sites/' + encodeURIComponent(s.name) + '/ads-txt/check'); render(); } catch (e) { main().prepend(errorBox(e)); }
          } })),
        el('span', {}, adsTxt(s), ' ', can('campaigns:write') ? confirmButton('Delete', 'Delete site ' + s.name + '? Its publisher is then owed nothing for it, and its seller id is never given again.', async () => {
          try { await api('DELETE', '/api/v1/sites/' + encodeURIComponent(s.name)); render(); } catch (e) { main().prepend(errorBox(e)); }
        }) : '')]), 'No sites yet: placements name their site; a site says what share of what they earn is its publisher\'s.')];
    if (can('campaigns:write')) {
      const name = el('input', { required: true }), domains = el('input', { placeholder: 'news.example, m.news.example' }),
        share = el('input', { type: 'number', min: '0', max: '100', step: '0.0001', required: true, value: '70' }),
        type = el('select', {}, sellerTypes.map(t => el('option', { value: t, text: t }))),
        secret = el('input', { type: 'checkbox' }), quarantine = el('input', { type: 'checkbox', id: 'site-quarantined' }),
        child = el('input', { type: 'checkbox', id: 'site-child' });
      // The same name fills the form with the site's values, so that a
      // change keeps what it does not touch.
      name.addEventListener('change', () => {
        const s = list.sites.find(s => s.name === name.value);
        if (!s) return;
        domains.value = s.domains.join(', '); share.value = String(Math.round(s.revenueShare * 1e6) / 1e4);
        type.value = s.sellerType; secret.checked = s.confidential; quarantine.checked = s.quarantined; child.checked = s.childDirected;
      });
      const form = el('form', { id: 'new-site' }, el('h2', { text: 'New site (or change one: the same name)' }), field('Name (as placements name it)', name, 'name'),
        field('Domains', domains, 'domains'), field("Publisher's revenue share (%)", share, 'revenueShare'),
        field('Seller type (sellers.json)', type, 'sellerType'),
        field('Confidential (no name or domain in sellers.json)', secret, 'confidential'),
        field('Quarantined (serves, bills nothing, earns its publisher nothing)', quarantine, 'quarantined'),
        field('Directed to children (COPPA): no user, no personalisation, whatever the consent', child, 'childDirected'), el('button', { type: 'submit', text: 'Save site' }));
      form.addEventListener('submit', async ev => {
        ev.preventDefault();
        const body = { name: name.value, domains: domains.value.split(',').map(d => d.trim()).filter(Boolean), revenueShare: (+share.value) / 100,
          sellerType: type.value, confidential: secret.checked, quarantined: quarantine.checked, childDirected: child.checked };
        try {
          if (list.sites.some(s => s.name === name.value)) await api('PUT', '/api/v1/sites/' + encodeURIComponent(name.value), body);
          else await api('POST', '/api/v1/sites', body);
          render();
        } catch (e) { showProblems(form, e); }
      });
      out.push(form);
    }
    show(...out);
  });

  route(/^\/invoices$/, 'reports:read', async () => {
    const [list, names] = await Promise.all([api('GET', '/api/v1/invoices'), advertiserNames()]);
    const out = [el('h1', { text: asAdvertiser() ? 'Your invoices' : 'Invoices' }),
      table(['Number', 'Kind', 'Advertiser', 'Period (UTC)', 'Total', 'Issued', '', ''], list.invoices.map(d => [d.number, d.kind === 'creditNote' ? 'credit note (cancels ' + d.corrects + ')' : d.creditedBy ? 'invoice (cancelled by ' + d.creditedBy + ')' : 'invoice',
        d.advertiser || names.get(d.advertiserId) || d.advertiserId, d.from.slice(0, 10) + ' → ' + d.to.slice(0, 10), money(d.total), fmtTime(d.issuedAt), docLinks('invoices', d),
        can('campaigns:write') && d.kind === 'invoice' && !d.creditedBy ? confirmButton('Credit', 'Cancel ' + d.number + ' with a credit note? Its period may then be invoiced again.', async () => {
          try { await api('POST', '/api/v1/invoices/' + d.id + '/credit'); render(); } catch (e) { main().prepend(errorBox(e)); }
        }) : '']), 'No invoices yet.')];
    if (can('campaigns:write')) {
      const [a, b] = monthBefore();
      const adv = el('select', { required: true }, [...names].map(([id, n]) => el('option', { value: id, text: n })));
      const from = dayInput(a), to = dayInput(b);
      const form = el('form', { id: 'new-invoice' }, el('h2', { text: 'Issue an invoice' }), el('p', { class: 'muted', text: 'Whole UTC days; its total is the advertiser\'s billed spend in the reports. It is numbered and never changes: a correction is a credit note and a new invoice.' }),
        field('Advertiser', adv, 'advertiserId'), field('From (UTC day)', from, 'from'), field('To (UTC day, not included)', to, 'to'), el('button', { type: 'submit', text: 'Issue invoice' }));
      form.addEventListener('submit', async ev => {
        ev.preventDefault();
        try { await api('POST', '/api/v1/invoices', { advertiserId: adv.value, from: utcDay(from.value), to: utcDay(to.value) }); render(); } catch (e) { showProblems(form, e); }
      });
      out.push(form);
    }
    show(...out);
  });

  route(/^\/statements$/, 'reports:read', async () => {
    const list = await api('GET', '/api/v1/statements');
    const out = [el('h1', { text: asPublisher() ? 'Your statements' : 'Statements' }),
      table(['Number', 'Site', 'Period (UTC)', 'Gross', 'Owed (net)', 'Issued', ''], list.statements.map(d => [d.number, d.site, d.from.slice(0, 10) + ' → ' + d.to.slice(0, 10),
        money(d.gross || 0), money(d.total), fmtTime(d.issuedAt), docLinks('statements', d)]), 'No statements yet.')];
    if (can('campaigns:write')) {
      const [a, b] = monthBefore();
      const sites = await api('GET', '/api/v1/sites');
      const site = el('select', { required: true }, sites.sites.map(s => el('option', { value: s.name, text: s.name })));
      const from = dayInput(a), to = dayInput(b);
      const form = el('form', { id: 'new-statement' }, el('h2', { text: 'Issue a statement' }), field('Site', site, 'site'), field('From (UTC day)', from, 'from'),
        field('To (UTC day, not included)', to, 'to'), el('button', { type: 'submit', text: 'Issue statement' }));
      form.addEventListener('submit', async ev => {
        ev.preventDefault();
        try { await api('POST', '/api/v1/statements', { site: site.value, from: utcDay(from.value), to: utcDay(to.value) }); render(); } catch (e) { showProblems(form, e); }
      });
      out.push(form);
    }
    show(...out);
  });

  // conversionSecretButton makes an advertiser's new conversion secret and
  // shows it once (what its server signs conversion pixels with).
  const conversionSecretButton = (a) => {
    const wrap = el('div', { class: 'row', id: 'conversion-secret' });
    const make = async () => {
      try {
        const r = await api('POST', '/api/v1/advertisers/' + a.id + '/conversion-secret');
        wrap.replaceChildren(el('p', { role: 'status' }, 'The new conversion secret — shown only now; the one before stops verifying: ', el('code', { text: r.secret })));
      } catch (e) { wrap.prepend(errorBox(e)); }
    };
    wrap.append(el('span', { class: 'muted', text: a.conversionSigning ? 'Signed conversion pixels verify. ' : 'No conversion secret yet: pixels count unverified. ' }),
      a.conversionSigning ? confirmButton('New conversion secret', 'Make a new secret? Pixels signed with the one now stop verifying.', make) :
        el('button', { type: 'button', text: 'Make a conversion secret', onclick: make }));
    return wrap;
  };

  // prepaidBalance is a prepaid advertiser's balance and top-ups; "Add
  // funds" opens a Stripe Checkout Session and goes to it (Stripe sends
  // the payer back here with ?topUp=); the team may give a credit.
  async function prepaidBalance(a, q) {
    const path = '/api/v1/advertisers/' + a.id;
    const b = await api('GET', path + '/balance');
    const box = el('section', { class: 'card', id: 'prepaid-balance' }, el('h2', { text: 'Prepaid balance' }),
      el('p', { class: 'balance', id: 'balance', text: money(b.balance) }),
      el('p', { class: 'muted', text: 'Paid in ' + money(b.credited) + ', spent ' + money(b.spent) + '. Campaigns stop when the balance is spent.' }));
    if (q.get('topUp')) {
      const back = b.topUps.find(t => t.id === q.get('topUp'));
      box.append(el('p', { role: 'status', class: 'notice', id: 'top-up-back', text: q.get('cancelled') ? 'The payment was cancelled: nothing was charged.' :
        back && back.status === 'paid' ? 'Thank you: ' + money(back.amount) + ' was added to the balance.' :
          'Thank you: the balance shows the payment once Stripe confirms it (a moment).' }));
    }
    box.append(table(['Top-up', 'Amount', 'Status', 'Made', 'Paid'], b.topUps.map(t => [t.kind === 'credit' ? 'credit: ' + t.reason : 'card',
      money(t.amount), t.status + (t.refunded ? ' (' + money(t.refunded) + ' refunded)' : ''), fmtTime(t.createdAt) + ' by ' + t.createdBy, fmtTime(t.paidAt)]), 'No top-up yet.'));
    if (can('billing:write') && a.state === 'active') {
      const amount = el('input', { type: 'number', min: '1', step: '0.01', id: 'top-up-amount', value: '50' });
      const pay = el('form', { id: 'add-funds', class: 'row' }, field('Amount (' + b.currency + ')', amount, 'amount'),
        el('button', { type: 'submit', class: 'primary', id: 'add-funds-button', text: 'Add funds' }));
      pay.addEventListener('submit', async ev => {
        ev.preventDefault();
        try {
          const t = await api('POST', path + '/top-ups', { amount: amount.value });
          location.assign(t.checkoutUrl); // Stripe's page: the card is typed there, never here
        } catch (e) { showProblems(pay, e); }
      });
      box.append(pay);
      if (!asAdvertiser()) {
        const credit = el('input', { type: 'number', min: '0', step: 'any', id: 'credit-amount' }), reason = el('input', { type: 'text', id: 'credit-reason', maxlength: 500 });
        const give = el('form', { id: 'give-credit', class: 'row' }, field('Credit (' + b.currency + ')', credit, 'amount'), field('Reason (a refund of …)', reason, 'reason'),
          el('button', { type: 'submit', text: 'Give credit' }));
        give.addEventListener('submit', async ev => {
          ev.preventDefault();
          try { await api('POST', path + '/top-ups', { amount: credit.value, kind: 'credit', reason: reason.value }); render(); } catch (e) { showProblems(give, e); }
        });
        box.append(give);
      }
    }
    return box;
  }

  // postbackKeys is an advertiser's postback keys (its server's, to post
  // conversions): listed, made (the secret shown once) and revoked.
  async function postbackKeys(a) {
    const path = '/api/v1/advertisers/' + a.id + '/postback-keys';
    const { keys } = await api('GET', path);
    const box = el('section', { class: 'card', id: 'postback-keys' }, el('h2', { text: 'Postback keys' }),
      el('p', { class: 'muted', text: 'Your server posts conversions (POST /api/v1/conversions) with one of these keys: they may do nothing else.' }));
    const shown = el('div');
    box.append(shown, table(['Key', 'Made', 'Last used', ''], keys.map(k => [k.prefix + '…', fmtTime(k.createdAt) + ' by ' + k.createdBy, fmtTime(k.lastUsedAt),
      confirmButton('Revoke', 'Revoke this key? Postbacks made with it are refused at once.', async () => {
        try { await api('DELETE', path + '/' + k.id); render(); } catch (e) { box.prepend(errorBox(e)); }
      })]), 'No postback key yet.'),
    el('button', { type: 'button', id: 'new-postback-key', text: 'Make a postback key', onclick: async () => {
      try {
        const k = await api('POST', path);
        shown.replaceChildren(el('div', { class: 'notice', role: 'status' }, el('p', { text: 'The new key — copy it now: it is not shown again.' }),
          el('div', { class: 'secret', id: 'postback-secret', text: k.key }), copyButton(k.key)));
      } catch (e) { box.prepend(errorBox(e)); }
    } }));
    return box;
  }

  // Campaigns.
  const campaignStats = c => c.goal && can('reports:read') ? api('GET', '/api/v1/campaigns/' + c.id + '/stats?from=' + encodeURIComponent(new Date(Date.now() - day).toISOString())).catch(() => null) : null;
  // The campaign list: what an ad team sorts by — advertiser, state, the
  // last 7 days' impressions, clicks, CTR and spend (one report of every
  // campaign), and the goal's pacing.
  route(/^\/campaigns$/, 'campaigns:read', async (_, q) => {
    const rg = rangeOf(new URLSearchParams('range=7d'));
    // Each campaign's week: from every campaign's top list, or, for an
    // advertiser's account (which reads only its own), from its report by
    // campaign.
    const week = !can('reports:read') ? null : asAdvertiser() ?
      api('GET', '/api/v1/reports' + statsQuery(rg, '&by=campaign')).then(r => ({ top: r.rows.map(x => ({ id: x.dims.campaign.id, impressions: x.impressions,
        clicks: x.clicks, ctr: x.ctr, spend: x.revenue })) })).catch(() => null) :
      api('GET', '/api/v1/stats' + statsQuery(rg, '&top=campaigns&limit=1000')).catch(() => null);
    const [advs, stats] = await Promise.all([advertiserNames(), week]);
    const byId = new Map(((stats && stats.top) || []).map(t => [t.id, t]));
    const figures = stats ? [{ t: 'Impressions (7 days)', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'CTR', num: 1 }, { t: 'Spend', num: 1 }] : [];
    await listPage({ title: 'Campaigns', path: '/api/v1/campaigns', q, states: ['draft', 'pending', 'active', 'paused', 'archived'], newHref: '#/campaigns/new', newId: 'new-campaign',
      bulk: can('campaigns:write') ? bulkBar : null,
      head: ['Name', 'Advertiser', ...(asAdvertiser() ? [] : ['Tier']), 'State', ...figures, 'Pacing', 'Flight'], empty: 'No campaigns yet.',
      row: async c => {
        const s = await campaignStats(c), t = byId.get(String(c.id)) || { impressions: 0, clicks: 0 };
        return [el('a', { href: '#/campaigns/' + c.id, text: c.name }), advertiserLink(c.advertiserId, advs), ...(asAdvertiser() ? [] : [c.priority + (c.weight !== 1 ? ' ×' + c.weight : '')]), c.state,
          ...(stats ? [num(t.impressions), num(t.clicks), t.impressions ? pct(t.ctr) : '—', t.spend !== undefined ? money(t.spend) : c.price ? money(0) : '—'] : []),
          c.goal ? (s ? progressBar(s.goal) : goalText(c.goal)) : el('span', { class: 'muted', text: 'no goal' }), dateOnly(c.startAt) + ' → ' + dateOnly(c.endAt)];
      } });
  });
  route(/^\/campaigns\/new$/, null, async (_, q) => mayDraft() ? campaignEditor(null, { advertiserId: q.get('advertiser') || (asAdvertiser() && session.advertisers.length === 1 ? session.advertisers[0] : '') }) : notAllowed('campaigns:write'));
  route(/^\/campaigns\/(\d+)\/edit$/, null, async ([id]) => mayDraft() ? campaignEditor(id, await api('GET', '/api/v1/campaigns/' + id)) : notAllowed('campaigns:write'));
  const notAllowed = scope => show(el('h1', { text: 'Not allowed' }), el('p', { text: 'Your role does not include "' + scope + '".' }));
  async function campaignEditor(id, c) {
    const { items: advertisers } = await api('GET', '/api/v1/advertisers?state=active&limit=1000');
    const sel = (opts, cur, label) => el('select', label ? { 'aria-label': label } : {}, opts.map(([v, t]) => el('option', { value: v, text: t, selected: String(cur) === v })));
    const adv = sel([['', 'Choose an advertiser'], ...advertisers.map(a => [a.id, a.name])], c.advertiserId || '');
    const name = el('input', { type: 'text', id: 'campaign-name', value: c.name || '', maxlength: 200 });
    const start = localInput(c.startAt || new Date().toISOString()), end = localInput(c.endAt || new Date(Date.now() + 30 * day).toISOString());
    const team = !asAdvertiser(); // an advertiser's draft leaves tier, weight and trafficking to the team
    const tier = sel(tiers.map(t => [t, t]), c.priority || 'standard');
    const weight = el('input', { type: 'number', min: 1, max: 1000, value: c.weight || 1 });
    const g = c.goal || {};
    const metric = sel([['', 'No goal'], ['impressions', 'Impressions'], ['clicks', 'Clicks'], ['conversions', 'Conversions']], g.metric || '');
    const total = el('input', { type: 'number', min: 1, value: g.total || '' }), daily = el('input', { type: 'number', min: 1, value: g.daily || '' });
    const pacing = sel([['', 'Default (even with a goal)'], ['even', 'Even (to the goal, else the daily budget)'], ['asap', 'As soon as possible']], c.pacing && (c.goal || c.budget) ? c.pacing : '');
    const cap = c.frequencyCap || {};
    const capCount = el('input', { type: 'number', min: 1, value: cap.count || '' });
    const capWindow = sel([['', 'No cap'], ['1h', 'an hour'], ['24h', '24 hours'], ['7d', '7 days'], ['flight', 'the flight']], cap.window || '');
    const pr = c.price || {};
    const model = sel([['', 'No price'], ['cpm', 'CPM (per 1,000 impressions)'], ['vcpm', 'vCPM (per 1,000 viewable impressions)'], ['cpc', 'CPC (per click)'],
      ['cpa', 'CPA (per conversion)'], ['flat', 'Flat, for the flight'], ['daily', 'Flat, per day']], pr.model || '');
    const amount = el('input', { type: 'number', min: 0, step: 'any', value: pr.amount === undefined ? '' : pr.amount });
    const bu = c.budget || {};
    const budgetDaily = el('input', { type: 'number', min: 0, step: 'any', id: 'budget-daily', value: bu.daily === undefined ? '' : bu.daily });
    const budgetTotal = el('input', { type: 'number', min: 0, step: 'any', id: 'budget-total', value: bu.total === undefined ? '' : bu.total });
    const at = c.attribution || {};
    const postClick = el('input', { type: 'text', id: 'post-click', value: at.postClick || '', placeholder: '30d' });
    const postView = el('input', { type: 'text', id: 'post-view', value: at.postView || '', placeholder: '1d' });
    const maxValue = el('input', { type: 'number', id: 'max-value', min: '0', step: '0.01', value: at.maxValue || '', placeholder: 'no cap' });
    const keywords = el('input', { type: 'text', value: (c.keywords || []).join(', '), placeholder: 'sports, news' });
    // Trafficking: labels (exclusive ones apart), roadblock, rotation.
    const labels = el('input', { type: 'text', id: 'labels', value: (c.labels || []).filter(l => !l.exclusive).map(l => l.name).join(', '), placeholder: 'travel' });
    const exclusive = el('input', { type: 'text', id: 'exclusive-labels', value: (c.labels || []).filter(l => l.exclusive).map(l => l.name).join(', '), placeholder: 'airline' });
    const roadblock = sel([['', 'No roadblock'], ['all-or-none', 'All or none of its placements'], ['as-many-as-possible', 'As many of its placements as possible']], c.roadblock || '');
    const perPage = el('input', { type: 'number', id: 'max-per-page', min: 1, max: 20, value: c.maxPerPage || 1 });
    const ro = c.rotation || {};
    const rotation = sel([['', 'Even'], ['weighted', 'Weighted'], ['sequential', 'Sequential, per person (needs a frequency cap)'], ['optimized', 'Optimized by click-through rate']], ro.type && ro.type !== 'even' ? ro.type : '');
    const weights = el('input', { type: 'text', id: 'rotation-weights', value: Object.entries(ro.weights || {}).map(([k, v]) => k + ':' + v).join(', '), placeholder: 'ad id:weight, e.g. 12:3, 13:1' });
    const sequence = el('input', { type: 'text', id: 'rotation-sequence', value: (ro.sequence || []).join(', '), placeholder: 'ad ids in order, e.g. 12, 13, 14' });
    const minImpressions = el('input', { type: 'number', min: 10, id: 'rotation-min', value: ro.minImpressions || '', placeholder: '1000' });
    const conds = el('div', { id: 'conditions' });
    const addCond = x => conds.append(condEditor(x || {}, conds));
    (c.conditions || []).forEach(addCond);
    const targeting = targetingEditor(c.targeting, await seenValues());
    const zonesId = nextId('zones');
    const tz = el('input', { type: 'text', list: zonesId, value: c.timeZone || '', placeholder: 'UTC', id: 'time-zone' });
    const zones = el('datalist', { id: zonesId }, (Intl.supportedValuesOf ? Intl.supportedValuesOf('timeZone') : []).map(z => el('option', { value: z })));
    // body is the campaign the editor holds, as the API takes it.
    const body = () => {
      const body = { advertiserId: adv.value, name: name.value, startAt: fromLocal(start.value), endAt: fromLocal(end.value), priority: tier.value,
        weight: +weight.value || 1, conditions: [...conds.children].map(x => x.read()),
        keywords: keywords.value.split(',').map(s => s.trim()).filter(Boolean) };
      const tree = targeting.read();
      if (tree !== undefined) body.targeting = tree;
      if (tz.value.trim()) body.timeZone = tz.value.trim();
      if (metric.value) { body.goal = { metric: metric.value }; if (total.value) body.goal.total = +total.value; if (daily.value) body.goal.daily = +daily.value; }
      if (pacing.value) body.pacing = pacing.value;
      if (capWindow.value || capCount.value) body.frequencyCap = { count: +capCount.value || 0, window: capWindow.value };
      if (model.value) body.price = { model: model.value, amount: amount.value === '' ? '' : amount.value };
      if (budgetDaily.value !== '' || budgetTotal.value !== '') {
        body.budget = {};
        if (budgetDaily.value !== '') body.budget.daily = budgetDaily.value;
        if (budgetTotal.value !== '') body.budget.total = budgetTotal.value;
      }
      const names = v => v.split(',').map(x => x.trim()).filter(Boolean);
      const ls = [...names(exclusive.value).map(n => ({ name: n, exclusive: true })), ...names(labels.value).map(n => ({ name: n }))];
      if (ls.length) body.labels = ls;
      if (roadblock.value) body.roadblock = roadblock.value;
      else if (+perPage.value > 1) body.maxPerPage = +perPage.value;
      if (rotation.value) {
        body.rotation = { type: rotation.value };
        if (rotation.value === 'weighted') body.rotation.weights = Object.fromEntries(names(weights.value).map(x => x.split(':').map(y => y.trim())).map(([k, v]) => [k, +v]));
        if (rotation.value === 'sequential') body.rotation.sequence = names(sequence.value);
        if (rotation.value === 'optimized' && minImpressions.value) body.rotation.minImpressions = +minImpressions.value;
      }
      if (postClick.value.trim() || postView.value.trim() || maxValue.value) {
        body.attribution = {};
        if (postClick.value.trim()) body.attribution.postClick = postClick.value.trim();
        if (postView.value.trim()) body.attribution.postView = postView.value.trim();
        if (maxValue.value) body.attribution.maxValue = maxValue.value;
      }
      if (!team) for (const k of ['priority', 'weight', 'labels', 'roadblock', 'maxPerPage', 'rotation']) delete body[k];
      return body;
    };
    const form = el('form', { class: 'card', id: 'campaign-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      try {
        const r = await api(id ? 'PUT' : 'POST', '/api/v1/campaigns' + (id ? '/' + id : ''), body());
        go('#/campaigns/' + r.id);
      } catch (e) { showProblems(form, e); }
    } },
    el('div', { class: 'grid2' }, field('Advertiser', adv, 'advertiserId'), field('Name', name, 'name')),
    el('div', { class: 'grid2' }, field('Starts (your time)', start, 'startAt'), field('Ends (your time)', end, 'endAt')),
    team ? el('div', { class: 'grid2' }, field('Tier (a higher one always wins)', tier, 'priority'), field('Weight within the tier (1–1000)', weight, 'weight')) : null,
    el('fieldset', { class: 'cond', 'data-field': 'goal' }, el('legend', { text: 'Goal' }),
      el('div', { class: 'row' }, field('Metric', metric, 'goal.metric'), field('In all', total, 'goal.total'), field('A day', daily, 'goal.daily'), field('Pacing', pacing, 'pacing'))),
    el('fieldset', { class: 'cond', 'data-field': 'frequencyCap' }, el('legend', { text: 'Frequency cap (per person)' }),
      el('div', { class: 'row' }, field('At most', capCount, 'frequencyCap.count'), field('times in', capWindow, 'frequencyCap.window'))),
    el('fieldset', { class: 'cond', 'data-field': 'price' }, el('legend', { text: 'Price' }),
      el('div', { class: 'row' }, field('Model', model, 'price.model'), field('Amount (' + currency() + ')', amount, 'price.amount'))),
    el('fieldset', { class: 'cond', 'data-field': 'budget' }, el('legend', { text: 'Budget (what verified events may cost; even pacing without a goal spreads the daily amount over the day)' }),
      el('div', { class: 'row' }, field('A day (' + currency() + ', in the time zone below)', budgetDaily, 'budget.daily'), field('In all (' + currency() + ')', budgetTotal, 'budget.total'))),
    el('fieldset', { class: 'cond', 'data-field': 'attribution' }, el('legend', { text: 'Conversions: attribution windows' }),
      el('div', { class: 'row' }, field('After a click (e.g. 30d)', postClick, 'attribution.postClick'), field('After an impression (e.g. 1d)', postView, 'attribution.postView'),
        field('Most one conversion may be worth (' + currency() + ')', maxValue, 'attribution.maxValue'))),
    field('Keywords (a decision request must carry one; none: any)', keywords, 'keywords'),
    !team ? null : el('fieldset', { class: 'cond', 'data-field': 'labels' }, el('legend', { text: 'Trafficking' }),
      el('div', { class: 'row' }, field('Exclusive labels (never two campaigns with one on a page)', exclusive, 'labels'), field('Other labels', labels, 'labels.name')),
      el('div', { class: 'row' }, field('Roadblock (the placements its ads name, together)', roadblock, 'roadblock'), field('Slots of one page it may fill (different ads)', perPage, 'maxPerPage'), field('Rotation of its ads', rotation, 'rotation.type')),
      el('div', { class: 'row' }, field('Weights (weighted)', weights, 'rotation.weights'), field('Sequence (sequential)', sequence, 'rotation.sequence'),
        field('Impressions per ad before CTR decides (optimized)', minImpressions, 'rotation.minImpressions'))),
    el('div', { 'data-field': 'conditions', class: 'field' }, el('h2', { text: 'Targeting (every ad of the campaign)' }), conds,
      el('button', { type: 'button', id: 'add-condition', text: 'Add a condition', onclick: () => addCond({}) })),
    targeting, field('Time zone of the day-parts (IANA; none: UTC)', tz, 'timeZone'), zones,
    team ? availabilityPanel(id, body, () => form) : el('p', { class: 'muted', text: 'Saved as a draft: submit it for approval from its page. The ad team sets its tier and weight.' }),
    el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary', text: id ? 'Save' : 'Create campaign' }),
      el('a', { href: id ? '#/campaigns/' + id : '#/campaigns', text: 'Cancel' })));
    show(el('h1', { text: id ? 'Edit ' + c.name : team ? 'New campaign' : 'New draft campaign' }), advertisers.length ? null : el('div', { class: 'notice', role: 'status' }, 'No active advertiser yet: ',
      el('a', { href: '#/advertisers/new', text: 'create one first' }), '.'), form);
    (c.advertiserId ? name : adv).focus();
  }
  route(/^\/campaigns\/(\d+)$/, 'campaigns:read', async ([id], q) => {
    const c = await api('GET', '/api/v1/campaigns/' + id);
    const [a, ads] = await Promise.all([api('GET', '/api/v1/advertisers/' + c.advertiserId), can('ads:read') ? api('GET', '/api/v1/ads?limit=100&campaignId=' + id) : null]);
    const write = can('campaigns:write') && c.state !== 'archived';
    const state = (label, verb) => el('button', { type: 'button', id: verb, text: label, onclick: async () => {
      try { await api('POST', '/api/v1/campaigns/' + id + '/' + verb); render(); } catch (e) { main().prepend(errorBox(e)); }
    } });
    const facts = [['Advertiser', el('a', { href: '#/advertisers/' + a.id, text: a.name })], ['State', stateText(c)], ['Flight', fmtTime(c.startAt) + ' → ' + fmtTime(c.endAt)],
      ...(asAdvertiser() ? [] : [['Tier and weight', c.priority + ', ' + c.weight]]), ['Goal', goalText(c.goal) + (c.goal ? ', paced ' + c.pacing : '')],
      ['Frequency cap', c.frequencyCap ? c.frequencyCap.count + ' per ' + c.frequencyCap.window : 'none'],
      ['Price', priceText(c.price)], ['Budget', budgetText(c.budget) + (c.budget && c.timeZone ? ' (days in ' + c.timeZone + ')' : '')],
      ['Attribution', 'post-click ' + ((c.attribution || {}).postClick || '30d') + ', post-view ' + ((c.attribution || {}).postView || '1d') +
        ((c.attribution || {}).maxValue ? ', a conversion worth at most ' + money(c.attribution.maxValue) : '')],
      ['Keywords', c.keywords.join(', ') || 'any'],
      ...(asAdvertiser() ? [] : [['Labels', (c.labels || []).map(l => l.name + (l.exclusive ? ' (exclusive)' : '')).join(', ') || 'none'],
        ['Roadblock', c.roadblock ? c.roadblock.replace(/-/g, ' ') + ' of the placements its ads name' : 'none'],
        ['Slots of one page', String(c.maxPerPage || 1)],
        ['Rotation', rotationText(c.rotation)]]),
      ['Targeting', c.conditions.length ? c.conditions.map(describe).join(' OR ') : 'everyone'],
      ['Targeting rules', c.targeting ? describeTree(c.targeting) + (c.timeZone ? ' (' + c.timeZone + ')' : '') : 'none']];
    const out = [el('h1', { text: c.name }),
      // Approval: a draft is submitted (by the team or the advertiser's own
      // account) and approved or rejected by who may approve.
      ['draft', 'pending'].includes(c.state) ? el('div', { class: 'row', id: 'approval' },
        c.state === 'draft' && can('campaigns:submit') ? state('Submit for approval', 'submit') : null,
        can('campaigns:approve') ? state('Approve', 'approve') : null,
        c.state === 'pending' && can('campaigns:approve') ? rejectForm(id, render) : null,
        c.state === 'pending' && !can('campaigns:approve') ? el('p', { class: 'muted', text: 'Waiting for approval: it serves once approved.' }) : null) : null,
      // An advertiser's own draft: it changes it, and adds its ads, until
      // it submits it.
      !write && asAdvertiser() && mayDraft() && c.state === 'draft' ? el('div', { class: 'row' }, el('a', { href: '#/campaigns/' + id + '/edit', class: 'button', id: 'edit', text: 'Edit' }),
        can('ads:write') ? el('a', { href: '#/ads/new?campaign=' + id, class: 'button', id: 'new-ad', text: 'New ad in this campaign' }) : null) : null,
      write ? el('div', { class: 'row' }, el('a', { href: '#/campaigns/' + id + '/edit', class: 'button', id: 'edit', text: 'Edit' }),
        c.state === 'active' ? state('Pause', 'pause') : c.state === 'paused' ? state('Resume', 'resume') : null,
        can('ads:write') ? el('a', { href: '#/ads/new?campaign=' + id, class: 'button', id: 'new-ad', text: 'New ad in this campaign' }) : null,
        el('button', { type: 'button', id: 'clone', text: 'Clone with its ads', onclick: async () => {
          try { const r = await api('POST', '/api/v1/campaigns/' + id + '/clone'); go('#/campaigns/' + r.campaign.id); } catch (e) { main().prepend(errorBox(e)); }
        } }),
        confirmButton('Archive', 'Archive this campaign? It stops serving for good; its ads and reports stay.', async () => {
          try { await api('DELETE', '/api/v1/campaigns/' + id); render(); } catch (e) { main().prepend(errorBox(e)); }
        })) : null,
      el('div', { class: 'card' }, el('dl', { class: 'facts' }, facts.map(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)]).flat()),
        c.frequencyCap ? el('p', { class: 'muted', id: 'cap-needs-user', text: 'The cap counts per user key. A decision without one cannot apply it, and serves this campaign uncapped: ' +
          'the ad tag sends a key only with data-user (or data-cookie="1") and the viewer\'s consent (data-consent="1" or a TCF signal); a server-to-server decision sends "user":{"key":…}.' }) : null)];
    const d = await api('GET', '/api/v1/campaigns/' + id + '/delivery').catch(() => null);
    if (d) out.push(el('h2', { text: 'Delivery' }), deliveryCard(c, d, !asAdvertiser()));
    // (an advertiser's account is not shown the forecast: it names the campaigns booked beside)
    const risk = c.state === 'active' && !asAdvertiser() ? await api('GET', '/api/v1/forecasts/risk?campaign=' + id).catch(() => null) : null;
    if (risk && risk.campaigns.length) out.push(el('h2', { text: 'Delivery forecast' }), el('div', { id: 'campaign-risk' }, table(riskHead, [riskCells(risk.campaigns[0])])));
    if (ads) out.push(el('h2', { text: 'Ads' }), table(['Title', 'Creative', 'State'], ads.items.map(x => [el('a', { href: '#/ads/' + x.id, text: x.title }),
      x.creative ? x.creative.type + (x.creative.width ? ' ' + x.creative.width + '×' + x.creative.height : '') : '—', stateOf(x)]), 'No ads in this campaign yet.'));
    if (can('reports:read')) out.push(await reportSection('campaign', id, q, '#/campaigns/' + id));
    show(...out);
  });

  // bulkBar acts on the campaigns picked (ids() reads them): one action,
  // or one targeting (a JSON tree; empty clears), for all at once; each
  // campaign's outcome is shown, then done() reloads the list.
  function bulkBar(ids, done) {
    const out = el('div', { id: 'bulk-results', 'aria-live': 'polite' });
    const send = async body => {
      const picked = ids();
      if (!picked.length) { out.replaceChildren(el('p', { class: 'problem', text: 'Select campaigns first.' })); return; }
      try {
        const r = await api('POST', '/api/v1/campaigns/bulk', { ids: picked, ...body });
        const failed = r.results.filter(x => x.status !== 200);
        await done();
        out.replaceChildren(el('p', { role: 'status', text: (r.results.length - failed.length) + ' changed' + (failed.length ? '; ' + failed.map(x => 'campaign ' + x.id + ': ' + x.error).join('; ') : '') }));
      } catch (e) { out.replaceChildren(errorBox(e)); }
    };
    const actions = [['pause', 'Pause'], ['resume', 'Resume'], ['archive', 'Archive'], ['submit', 'Submit'], ['approve', 'Approve']]
      .filter(([a]) => a === 'submit' ? can('campaigns:submit') : a === 'approve' ? can('campaigns:approve') : true);
    const tree = el('input', { type: 'text', id: 'bulk-targeting', placeholder: '{"key":"section","in":["sports"]}', 'aria-label': 'Targeting for the selected (JSON; empty clears)' });
    return el('div', { class: 'card', id: 'bulk' }, el('div', { class: 'row' }, el('span', { class: 'muted', text: 'Selected campaigns:' }),
      actions.map(([a, t]) => el('button', { type: 'button', 'data-action': a, text: t, onclick: () => send({ action: a }) })),
      tree, el('button', { type: 'button', id: 'bulk-set-targeting', text: 'Set targeting', onclick: () => {
        let t = null;
        try { t = tree.value.trim() ? JSON.parse(tree.value) : null; } catch (e) { out.replaceChildren(el('p', { class: 'problem', text: 'The targeting is not JSON: ' + e.message })); return; }
        send({ targeting: t });
      } })), out);
  }

  // availabilityPanel checks the editor's campaign against the inventory
  // (POST /api/v1/forecasts): the requests its targeting matches over its
  // flight, what it would win as the booked campaigns contend, where it
  // fits, who is booked on its requests and whom it would take from.
  function availabilityPanel(id, body, form) {
    const placements = el('input', { type: 'text', id: 'forecast-placements', placeholder: 'none: its ads\' placements, else every one' });
    const out = el('div', { id: 'availability', 'aria-live': 'polite' });
    const check = async () => {
      const b = body(), req = { campaign: b };
      if (!b.advertiserId) delete b.advertiserId;
      if (!b.name) delete b.name;
      if (id) req.id = id;
      const names = placements.value.split(',').map(x => x.trim()).filter(Boolean);
      if (names.length) req.placements = names;
      out.replaceChildren(el('p', { class: 'muted', text: 'Checking…' }));
      try {
        out.replaceChildren(forecastCard(await api('POST', '/api/v1/forecasts', req)));
      } catch (e) {
        // The campaign's problems are the form's fields'.
        const probs = Object.fromEntries(Object.entries((e.body && e.body.problems) || {}).map(([k, v]) => [k.replace(/^campaign\./, ''), v]));
        if (Object.keys(probs).length) showProblems(form(), { body: { problems: probs } });
        out.replaceChildren(errorBox(e));
      }
    };
    return el('fieldset', { class: 'cond', 'data-field': 'placements' }, el('legend', { text: 'Check availability (a forecast of its flight against the campaigns booked)' }),
      el('div', { class: 'row' }, field('Placements (comma-separated)', placements, 'placements'),
        el('button', { type: 'button', id: 'check-availability', text: 'Check availability', onclick: check })), out);
  }

  // range is a forecast's figure with its 80% range.
  const range = p => num(p.mean) + ' (' + num(p.low) + '–' + num(p.high) + ')';

  // forecastCard shows a forecast (POST /api/v1/forecasts's answer).
  function forecastCard(f) {
    const fits = { guaranteed: 'as a guarantee: it delivers its goal and no booked campaign with a goal delivers less for it',
      remnant: 'in the remnant only: booked guaranteed campaigns would deliver less for it, but they leave some of its requests unsold',
      none: f.contending.length ? 'nowhere: the booked guaranteed campaigns take every request it matches' : 'nowhere: ' + (f.reason || 'its targeting matches no request'),
      unknown: 'not known yet: ' + f.reason }[f.fits];
    const rows = [['Flight forecast', fmtTime(f.from) + ' → ' + fmtTime(f.to) + ' in ' + (f.placements.join(', ') || 'no placement')],
      ['Matching requests', range(f.matching)], ['Available to it', range(f.available)],
      ['It would deliver', range(f.delivery) + (f.goal ? ' of its goal of ' + num(f.goal) : '')], ['Unsold (left for the remnant)', range(f.unsold)],
      ['Fits', fits], ...f.tiers.map(t => ['Taken by ' + t.priority, num(t.takes)])];
    return el('div', { class: 'card', id: 'forecast' },
      f.reason ? el('p', { class: 'notice', id: 'forecast-reason', role: 'status', text: f.reason }) : null,
      f.confidence === 'low' ? el('p', { class: 'notice', id: 'forecast-confidence', text: 'Low confidence: ' + f.confidenceReason }) : null,
      el('dl', { class: 'facts' }, rows.map(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]).flat()),
      el('h3', { text: 'Booked on its requests' }),
      el('div', { id: 'contending' }, table(['Campaign', 'Tier', 'Shares', 'Wins of them'], f.contending.map(c => [el('a', { href: '#/campaigns/' + c.id, text: c.name }), c.priority, num(c.shared), num(c.takes)]),
        'No booked campaign wants its requests.')),
      el('h3', { text: 'Booking it would take from' }),
      el('div', { id: 'takes-from' }, table(['Campaign', 'Tier', 'Delivers without it', 'With it'], f.takesFrom.map(c => [el('a', { href: '#/campaigns/' + c.id, text: c.name }), c.priority, num(c.without), num(c.with)]),
        'No booked campaign would deliver less.')),
      f.notes.length ? el('ul', { class: 'muted' }, f.notes.map(n => el('li', { text: n }))) : null,
      el('p', { class: 'muted', text: 'Counts are decisions (requests of one slot) over the rest of the flight; ranges hold the actual about four times in five. ' +
        'The model reads ' + f.model.weeks + ' weeks of requests and ' + num(f.model.samples) + ' sampled ones.' }));
  }

  // riskCells are a campaign's delivery risk as a table row's cells.
  // A forecast that knows nothing of its placements is "Not known yet",
  // never at risk; a low-confidence one says so beside its status; a
  // target set by a budget says how.
  const riskCells = r => {
    const unknown = r.unknown;
    const status = r.atRisk ? el('strong', { class: 'problem', text: 'At risk' }) : unknown ? 'Not known yet' : 'On track';
    return [el('span', { title: r.confidenceReason || '' }, status, r.confidence === 'low' && !unknown ? el('span', { class: 'muted', text: ' (low confidence)' }) : null),
      num(r.target) + (r.targetFrom === 'budget' ? ' (budget ÷ CPM × 1,000)' : ''), num(r.delivered), unknown ? '—' : range(r.forecast),
      unknown ? '—' : num(r.expected) + ' (' + pct(r.target ? r.expected / r.target : 1) + ')'];
  };
  const riskHead = ['Status', 'Target', 'Delivered', 'Forecast (rest of flight)', 'Expected'];

  // The campaigns whose forecast delivery misses their goal or budget,
  // for ad operations: most at risk first.
  route(/^\/risk$/, 'campaigns:read', async () => {
    const r = await api('GET', '/api/v1/forecasts/risk');
    show(el('h1', { text: 'Delivery risk' }), el('p', { class: 'muted', text: 'Each active campaign with a goal or budget: what it delivered, and what the forecast says it will win over the rest of its flight as the booked campaigns contend. ' +
      'At risk: expected below 99% of its target.' }),
      el('div', { id: 'risk' }, table(['Campaign', 'Tier', ...riskHead], r.campaigns.map(c => [el('a', { href: '#/campaigns/' + c.id, text: c.name }), c.priority, ...riskCells(c)]),
        'No active campaign has a goal or budget.')));
  });

  // rotationText says how a campaign's ads rotate.
  function rotationText(r) {
    if (!r || r.type === 'even') return 'even';
    if (r.type === 'weighted') return 'weighted: ' + (Object.entries(r.weights || {}).map(([k, v]) => 'ad ' + k + ' × ' + v).join(', ') || 'every ad 1');
    if (r.type === 'sequential') return 'sequential per person: ' + ((r.sequence || []).map(x => 'ad ' + x).join(' → ') || 'by id');
    return 'optimized by CTR after ' + num(r.minImpressions) + ' impressions per ad';
  }

  // stateText is a campaign's state and its last review: who submitted,
  // approved or rejected it, and why.
  function stateText(c) {
    const r = c.review;
    if (!r) return c.state;
    const done = { submit: 'submitted', approve: 'approved', reject: 'rejected' }[r.action];
    return c.state + ' — ' + done + ' by ' + r.by + ' on ' + fmtTime(r.at) + (r.reason ? ': ' + r.reason : '');
  }

  // rejectForm rejects a pending campaign with the reason its advertiser
  // reads, then calls done.
  function rejectForm(id, done, base = '/api/v1/campaigns/') {
    const reason = el('input', { type: 'text', required: true, maxlength: 1000, placeholder: 'What to change', 'aria-label': 'Reason for rejecting' });
    return el('form', { class: 'row reject', onsubmit: async e => {
      e.preventDefault();
      try { await api('POST', base + id + '/reject', { reason: reason.value }); done(); } catch (err) { main().prepend(errorBox(err)); }
    } }, reason, el('button', { type: 'submit', class: 'danger', text: 'Reject' }));
  }

  // The approval queue: campaigns submitted and waiting, oldest first,
  // each approved or rejected in place.
  route(/^\/approvals$/, 'campaigns:approve', async () => {
    const [page, advs, ads, camps] = await Promise.all([api('GET', '/api/v1/campaigns?state=pending&limit=1000'), advertiserNames(),
      api('GET', '/api/v1/ads?approval=pending&limit=1000'), campaignNames()]);
    const items = page.items.sort((x, y) => (x.review ? x.review.at : '').localeCompare(y.review ? y.review.at : ''));
    const approve = c => el('button', { type: 'button', text: 'Approve', 'data-id': c.id, onclick: async () => {
      try { await api('POST', '/api/v1/campaigns/' + c.id + '/approve'); render(); } catch (e) { main().prepend(errorBox(e)); }
    } });
    show(el('h1', { text: 'Approvals' }), el('p', { class: 'muted', text: 'Campaigns submitted for approval. Only approved campaigns serve.' }),
      table(['Campaign', 'Advertiser', 'Flight', 'Submitted', ''], items.map(c => [el('a', { href: '#/campaigns/' + c.id, text: c.name }),
        advertiserLink(c.advertiserId, advs), dateOnly(c.startAt) + ' → ' + dateOnly(c.endAt),
        c.review ? c.review.by + ', ' + fmtTime(c.review.at) : '—', el('div', { class: 'row' }, approve(c), rejectForm(c.id, render))]), 'No campaign waits for approval.'),
      el('h2', { text: 'Ads' }), el('p', { class: 'muted', text: 'Creatives an advertiser\'s account wrote. Only approved ads serve.' }),
      table(['Ad', 'Campaign', 'As it will render', 'Since its last approval', ''], ads.items.map(a => [el('a', { href: '#/ads/' + a.id, text: a.title }), campaignLink(a.campaignId, camps),
        el('div', { class: 'approval-creative' }, creativeView(a.creative), el('div', { class: 'muted', text: a.creative ? a.creative.type + (a.creative.width ? ' ' + a.creative.width + '×' + a.creative.height : '') +
          (a.creative.clickUrl ? ' → ' + a.creative.clickUrl : '') : '' })),
        (ch => ch === null ? el('span', { class: 'changes', text: 'new: never approved' }) : el('span', { class: 'changes', text: ch.length ? ch.join('; ') : 'nothing changed' }))(changedSince(a)),
        el('div', { class: 'row' }, el('button', { type: 'button', text: 'Approve', 'data-ad': a.id, onclick: async () => {
          try { await api('POST', '/api/v1/ad/' + a.id + '/approve'); render(); } catch (e) { main().prepend(errorBox(e)); }
        } }), rejectForm(a.id, render, '/api/v1/ad/'))]), 'No ad waits for approval.'));
  });

  // deliveryCard shows a campaign's delivery as the answering instance
  // sees it (GET /api/v1/campaigns/{id}/delivery).
  // deliveryCard is a campaign's delivery; team adds what only the ad
  // team reads (this instance's decisions and caps).
  function deliveryCard(c, d, team) {
    const rows = [['Serving', d.serving ? 'yes' : 'no — ' + d.why]];
    if (team) rows.push(['Decisions (this instance)', num(d.decisions) + (d.decisions === 1 ? ' decision' : ' decisions') + ' chose it since ' + fmtTime(d.since) + ', ' + d.decisionsPerSecond.toFixed(2) + ' a second over the last minute' +
        ' (a decision is not an impression: the report below counts those)'],
      ['Caps reached', c.frequencyCap ? num(d.capsReached) + (d.capsReached === 1 ? ' person' : ' people') + ' brought to the cap (' + num(d.capsReachedLastMinute) + ' in the last minute)' : 'no cap']);
    for (const [label, b] of [['Budget', d.budget], ['Advertiser\'s budget', d.advertiserBudget]]) {
      if (!b) continue;
      rows.push([label + ': spent today', !b.known ? 'not read yet' : money(b.spentToday) + (b.daily ? ' of ' + money(b.daily) + ' (' + pct(+b.spentToday / +b.daily) + ')' : '') +
        (b.expectedByNow !== undefined ? '; even pacing allows ' + money(b.expectedByNow) + ' by now' : '')]);
      rows.push([label + ': spent in all', !b.known ? 'not read yet' : money(b.spent) + (b.total ? ' of ' + money(b.total) + ' (' + pct(+b.spent / +b.total) + ')' : '')]);
    }
    if (d.delivered !== undefined) {
      rows.push(['Delivered toward the goal', num(d.delivered) + ' verified ' + c.goal.metric + ' over the flight' + (d.deliveredToday !== undefined && c.goal.daily ? ', ' + num(d.deliveredToday) + ' today' : '') +
        (d.expectedByNow !== undefined ? '; ' + num(d.expectedByNow) + ' expected by now' : '')]);
    }
    return el('div', { class: 'card', id: 'delivery' }, el('dl', { class: 'facts' }, rows.map(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]).flat()),
      team ? el('p', { class: 'muted', text: 'Decisions and caps are this instance\'s (each instance counts its own); delivered counts every instance, from the reports.' }) : null);
  }

  // Placements.
  route(/^\/placements$/, 'campaigns:read', async (_, q) => {
    await listPage({ title: 'Placements', path: '/api/v1/placements', q, newHref: '#/placements/new', newId: 'new-placement',
      head: ['Name', 'Site', 'Sizes', 'Types'], empty: 'No placements yet.',
      row: p => [el('a', { href: '#/placements/' + p.name, text: p.name }), p.site, p.sizes.join(', ') || 'any', p.types.join(', ')] });
  });
  route(/^\/placements\/new$/, 'campaigns:write', async () => placementEditor(null, {}));
  route(/^\/placements\/([a-z0-9_-]+)\/edit$/, 'campaigns:write', async ([name]) => placementEditor(name, await api('GET', '/api/v1/placements/' + name)));
  function placementEditor(name, p) {
    const n = el('input', { type: 'text', value: p.name || '', disabled: !!name, placeholder: 'home-top', pattern: '[a-z0-9][a-z0-9_-]*' });
    const site = el('input', { type: 'text', value: p.site || '', placeholder: 'example.com' });
    const sizes = el('input', { type: 'text', value: (p.sizes || []).join(', '), placeholder: '300x250, 728x90 (none: any size)' });
    const types = el('div', { class: 'checks', role: 'group', 'aria-label': 'Creative types' },
      ['image', 'html', 'native', 'video', 'tag', 'audio'].map(t => el('label', {}, el('input', { type: 'checkbox', value: t, checked: p.types ? p.types.includes(t) : t !== 'audio' }), t)));
    // A video placement's ad rules (VMAP's breaks), as the API takes them.
    const breaks = el('textarea', { rows: 3, id: 'ad-breaks', placeholder: '[{"offset": "start", "ads": 1}, {"offset": "50%", "ads": 2}, {"offset": "end", "ads": 1}]' });
    breaks.value = p.adBreaks ? JSON.stringify(p.adBreaks) : '';
    const def = el('input', { type: 'text', inputmode: 'numeric', value: p.defaultAdId || '' });
    const passback = el('textarea', { rows: 3, id: 'passback', placeholder: '<script src="https://…"></script>' });
    passback.value = p.passback || '';
    const floor = el('input', { type: 'number', min: 0, step: 'any', id: 'floor', value: p.floor === undefined ? '' : p.floor, placeholder: 'none' });
    const expected = el('input', { type: 'number', min: 0, step: 1, id: 'expected-daily', value: p.expectedDailyRequests || '', placeholder: 'not declared' });
    const longest = el('input', { type: 'number', min: 0, step: 'any', id: 'max-duration', value: p.maxDurationMs ? p.maxDurationMs / 1000 : '', placeholder: 'any' });
    const proof = el('input', { type: 'checkbox', id: 'render-proof', checked: !!p.renderProof });
    const child = el('input', { type: 'checkbox', id: 'child-directed', checked: !!p.childDirected });
    const form = el('form', { class: 'card', id: 'placement-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const body = { name: name || n.value, site: site.value, sizes: sizes.value.split(',').map(s => s.trim()).filter(Boolean),
        types: [...types.querySelectorAll('input:checked')].map(i => i.value) };
      if (def.value) body.defaultAdId = def.value;
      if (passback.value.trim()) body.passback = passback.value;
      if (floor.value !== '') body.floor = floor.value;
      body.expectedDailyRequests = +expected.value || 0;
      body.maxDurationMs = longest.value === '' ? 0 : Math.round(+longest.value * 1000);
      body.renderProof = proof.checked;
      body.childDirected = child.checked;
      if (breaks.value.trim()) {
        try { body.adBreaks = JSON.parse(breaks.value); } catch (_) { body.adBreaks = breaks.value; } // the API names what is wrong
      }
      try {
        const r = await api(name ? 'PUT' : 'POST', '/api/v1/placements' + (name ? '/' + name : ''), body);
        go('#/placements/' + r.name);
      } catch (e) { showProblems(form, e); }
    } }, el('div', { class: 'grid2' }, field('Name (a-z, 0-9, _ and -; used by the tag)', n, 'name'), field('Site or app', site, 'site')),
    field('Sizes', sizes, 'sizes'), field('Creative types it takes', types, 'types'), field('Default ad id (shown when nothing else fills it)', def, 'defaultAdId'),
    field('Passback: your own fallback tag (HTML) for a slot nothing fills, after the default ad', passback, 'passback'),
    field('Floor for header-bidding bids (CPM, ' + currency() + '; after each bidder\'s adjustment)', floor, 'floor'),
    field('Requests it expects a day (forecasts read it until it has three weeks of its own)', expected, 'expectedDailyRequests'),
    field('Longest video or audio ad it takes (seconds)', longest, 'maxDurationMs'),
    field('Ask the tag for a render proof: an impression without one bills nothing (tag slots only, not VAST)', proof, 'renderProof'),
    field('Directed to children (COPPA): no user, no personalisation, nothing of the user sent, whatever the consent', child, 'childDirected'),
    field('Ad breaks of a content video (VMAP: offset start, end, 00:10:00 or 50%; ads a break; maxDurationMs: the most its ads last together)', breaks, 'adBreaks'),
    el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary', text: name ? 'Save' : 'Create placement' }),
      el('a', { href: name ? '#/placements/' + name : '#/placements', text: 'Cancel' })));
    show(el('h1', { text: name ? 'Edit placement ' + name : 'New placement' }), form);
    (name ? site : n).focus();
  }
  // tagSnippet is what a publisher pastes to show the placement's ads: the
  // ad tag and the slot (docs/tag.md) and, for video, the VAST URL.
  function tagSnippet(p) {
    // A placement of one size reserves it as the page is parsed: the ad
    // shifts nothing (docs/tag.md, "No layout shift").
    const size = p.sizes.length === 1 ? p.sizes[0] : '', height = size.split('x')[1];
    const code = '<script async src="' + location.origin + '/t.js"></script>\n<div data-marquee-placement="' + p.name + '"' +
      (size ? ' data-marquee-size="' + size + '" style="min-height:' + height + 'px"' : '') + '></div>';
    const box = el('textarea', { id: 'tag-snippet', readonly: true, rows: 2, spellcheck: 'false', 'aria-label': 'Ad tag of ' + p.name, value: code });
    const vast = p.types.includes('video') ? location.origin + '/vast?placement=' + p.name : '';
    const vastBox = vast ? el('input', { type: 'text', id: 'vast-url', readonly: true, value: vast, 'aria-label': 'VAST URL of ' + p.name }) : null;
    return el('section', { class: 'card', 'aria-label': 'Ad tag' }, el('h2', { text: 'Put it on a page' }),
      el('p', { class: 'muted', text: 'Paste the script once per page and the element where the ad goes. Attributes for keywords, consent and a user key are in docs/tag.md.' }),
      box, el('div', { class: 'row' }, copyButton(code, box, 'copy-tag')),
      vast ? [el('p', { class: 'muted', text: 'Video players ask this VAST 4.2 URL (add the viewer\'s country, platform, age, gender, keywords or user as parameters):' }),
        vastBox, el('div', { class: 'row' }, copyButton(vast, vastBox, 'copy-vast'))] : null);
  }
  route(/^\/placements\/([a-z0-9_-]+)$/, 'campaigns:read', async ([name], q) => {
    const p = await api('GET', '/api/v1/placements/' + name);
    // The default ad by its title (an ad deleted since keeps its id).
    const def = p.defaultAdId && can('ads:read') ? await api('GET', '/api/v1/ad/' + p.defaultAdId).catch(() => null) : null;
    const out = [el('h1', { text: p.name }), el('p', { class: 'muted' }, (p.site || 'no site') + ' · sizes ' + (p.sizes.join(', ') || 'any') + ' · ' + p.types.join(', '),
      p.defaultAdId ? [' · default ad ', el('a', { href: '#/ads/' + p.defaultAdId, id: 'default-ad', text: def ? def.title : 'ad ' + p.defaultAdId })] : null,
      p.floor ? el('span', { id: 'floor', text: ' · header-bidding floor ' + money(p.floor) + ' CPM' }) : null,
      p.expectedDailyRequests ? el('span', { id: 'expected-daily', text: ' · expects ' + num(p.expectedDailyRequests) + ' requests a day' }) : null),
      can('campaigns:write') ? el('div', { class: 'row' }, el('a', { href: '#/placements/' + name + '/edit', class: 'button', id: 'edit', text: 'Edit' }),
        confirmButton('Delete', 'Delete placement ' + name + '? (Ads limited to it must be changed first.)', async () => {
          try { await api('DELETE', '/api/v1/placements/' + name); go('#/placements'); } catch (e) { main().prepend(errorBox(e)); }
        })) : null, tagSnippet(p)];
    if (can('reports:read')) out.push(await reportSection('placement', name, q, '#/placements/' + name));
    show(...out);
  });

  // Preview a decision: a placement and a viewer; who wins, and why the
  // others do not (a preview takes no cap serve and counts toward no pacing).
  route(/^\/decisions$/, 'campaigns:read', async () => {
    const { items: places } = await api('GET', '/api/v1/placements?limit=1000');
    // A page: one slot of each placement checked (roadblocks and
    // competitive exclusion decide across them, as on the page).
    const placement = el('div', { class: 'checks', role: 'group', 'aria-label': 'Placements of the page', id: 'preview-placements' },
      places.map((p, i) => el('label', {}, el('input', { type: 'checkbox', value: p.name, checked: i === 0 }), p.name)));
    const age = el('input', { type: 'number', min: 1, max: 100 });
    const gender = el('select', {}, [['', 'Any'], ['M', 'Men'], ['F', 'Women']].map(([v, t]) => el('option', { value: v, text: t })));
    const country = el('input', { type: 'text', maxlength: 2, placeholder: 'TW' });
    const platform = el('select', {}, [['', 'Any'], ['android', 'Android'], ['ios', 'iOS'], ['web', 'Web']].map(([v, t]) => el('option', { value: v, text: t })));
    const keywords = el('input', { type: 'text', placeholder: 'sports, news' });
    const user = el('input', { type: 'text', placeholder: 'a user key (for caps)' });
    const kv = el('input', { type: 'text', id: 'preview-kv', placeholder: 'section=sports, pos=atf' });
    const pageURL = el('input', { type: 'url', id: 'preview-url', placeholder: 'https://news.example/sports/nba' });
    const region = el('input', { type: 'text', id: 'preview-region', placeholder: 'US-CA' });
    const language = el('input', { type: 'text', id: 'preview-language', maxlength: 3, placeholder: 'en' });
    const ua = el('input', { type: 'text', id: 'preview-ua', placeholder: 'a User-Agent (default: this browser\'s)' });
    const at = el('input', { type: 'datetime-local', id: 'preview-at', 'aria-label': 'At (your time; none: now)' });
    const result = el('div', { id: 'preview-result', 'aria-live': 'polite' });
    const form = el('form', { class: 'card', id: 'preview-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const chosen = [...placement.querySelectorAll('input:checked')].map(i => i.value);
      const body = { placements: chosen.map(name => ({ div: name, placement: name })), explain: true, preview: true,
        keywords: keywords.value.split(',').map(s => s.trim()).filter(Boolean) };
      if (age.value) body.age = +age.value;
      if (gender.value) body.gender = gender.value;
      if (country.value) body.country = country.value;
      if (platform.value) body.platform = platform.value;
      if (user.value) body.user = { key: user.value };
      const pairs = kv.value.split(',').map(p => p.split('=').map(x => x.trim())).filter(([k, v]) => k && v);
      if (pairs.length) {
        body.kv = {};
        for (const [k, v] of pairs) body.kv[k] = k in body.kv ? [].concat(body.kv[k], v) : v;
      }
      if (pageURL.value) body.url = pageURL.value;
      if (region.value) body.region = region.value;
      if (language.value) body.language = language.value;
      if (ua.value) body.userAgent = ua.value;
      if (at.value) body.at = fromLocal(at.value);
      try {
        const r = await api('POST', '/api/v1/decisions', body);
        const cn = await campaignNames();
        result.replaceChildren(el('p', { class: 'muted', text: 'Decided as one page' + (at.value ? ' at ' + fmtTime(fromLocal(at.value)) : ' now') + ': ' + chosen.length + ' slot' + (chosen.length === 1 ? '' : 's') + '.' }),
          ...chosen.map(name => {
            const won = r.decisions[name] || [];
            return el('section', { class: 'preview-slot', 'data-slot': name }, el('h2', { text: name + ': ' + (!won.length ? 'nothing fills this slot' : won[0].default ? 'ad ' + won[0].adId + ', the placement\'s default ad' :
              won[0].bidder ? 'a bid of ' + won[0].bidder : 'ad ' + won[0].adId + ' of ' + (cn.get(String(won[0].campaignId)) || 'campaign ' + won[0].campaignId)) }),
              table(['Ad', 'Campaign', 'Tier', 'Status', { t: 'Weight', num: 1 }, { t: 'Chance', num: 1 }], ((r.explain || {})[name] || []).map(c => [
                el('a', { href: '#/ads/' + c.adId, text: 'ad ' + c.adId }), campaignLink(c.campaignId, cn),
                c.tier, c.status + (c.rotation ? ' — ' + c.rotation : ''), c.weight ? String(c.weight) : '', c.chance ? pct(c.chance) : '']), 'No ad of a campaign exists yet.'));
          }));
      } catch (e) { showProblems(form, e); }
    } },
    el('div', { class: 'grid2' }, field('Placements (a page: one slot each)', placement, 'placements'), field('User key', user, 'user.key')),
    el('div', { class: 'row' }, field('Age', age, 'age'), field('Gender', gender, 'gender'), field('Country', country, 'country'), field('Platform', platform, 'platform')),
    field('Keywords', keywords, 'keywords'),
    el('div', { class: 'grid2' }, field('Key-values', kv, 'kv'), field('Page URL', pageURL, 'url')),
    el('div', { class: 'row' }, field('Region (ISO 3166-2)', region, 'region'), field('Language', language, 'language'), field('At (your time; none: now)', at, 'at')),
    field('User-Agent', ua, 'userAgent'),
    el('button', { type: 'submit', class: 'primary', text: 'Preview the decision' }));
    show(el('h1', { text: 'Preview a decision' }), el('p', { class: 'muted', text: 'Who would fill each slot of a page for this viewer, now or at the time chosen, and why every other ad would not. A preview takes no cap serve and counts toward no pacing; budgets are read as they stand now.' }),
      places.length ? form : el('p', {}, 'No placement yet: ', el('a', { href: '#/placements/new', text: 'create one' }), '.'), result);
  });

  // creativeEditor edits an ad's creative: its type's fields, an image
  // uploaded (chosen or dropped), and a preview at its real size. read()
  // returns the creative, or undefined for none.
  function creativeEditor(c) {
    c = c || {};
    const box = el('fieldset', { class: 'cond', id: 'creative', 'data-field': 'creative' }, el('legend', { text: 'Creative' }));
    const type = el('select', { 'aria-label': 'Creative type' }, [['', 'None'], ['image', 'Image'], ['html', 'HTML'], ['native', 'Native'], ['video', 'Video'], ['audio', 'Audio'], ['tag', 'Third-party tag']]
      .map(([v, t]) => el('option', { value: v, text: t, selected: (c.type || '') === v })));
    const inp = (k, attrs = {}) => { const i = el('input', { type: 'text', value: c[k] === undefined ? '' : c[k], ...attrs }); i.dataset.k = k; return i; };
    const f = {
      width: inp('width', { type: 'number', min: 1, max: 4000 }), height: inp('height', { type: 'number', min: 1, max: 4000 }),
      clickUrl: inp('clickUrl', { type: 'url', placeholder: 'https://…?utm_source={placement}' }), image: inp('image', { readonly: true }),
      title: inp('title'), body: inp('body'), imageUrl: inp('imageUrl'), cta: inp('cta'), sponsoredBy: inp('sponsoredBy'),
      mediaUrl: inp('mediaUrl', { type: 'url' }), durationMs: inp('durationMs', { type: 'number', min: 1 }),
      skipOffsetMs: inp('skipOffsetMs', { type: 'number', min: 0, placeholder: 'not skippable' }),
      vastTagUrl: inp('vastTagUrl', { type: 'url', placeholder: "a buyer's VAST tag, instead of media: https://…?cb=[CACHEBUSTING]" }),
    };
    const uid = c.universalAdId || {};
    const uidRegistry = el('input', { type: 'text', value: uid.registry || '', placeholder: 'ad-id.org', id: 'creative-uid-registry' });
    const uidValue = el('input', { type: 'text', value: uid.value || '', id: 'creative-uid-value' });
    // A video's Open Measurement verifications, as the API takes them (JSON).
    const verif = el('textarea', { rows: 3, id: 'creative-verifications', placeholder: '[{"vendor": "iabtechlab.com-omid", "url": "https://…/omid.js", "parameters": "…"}]' });
    verif.value = c.verifications ? JSON.stringify(c.verifications, null, 1) : '';
    const html = el('textarea', { rows: 5, 'aria-label': 'HTML snippet' });
    html.value = c.html || '';
    const trusted = el('input', { type: 'checkbox', id: 'creative-trusted', checked: !!c.trusted });
    const lines = v => v.split('\n').map(x => x.trim()).filter(Boolean);
    const trackers = k => { const x = el('textarea', { rows: 2, id: 'creative-' + k, placeholder: 'https://… one URL a line; macros such as {random}, {placement}' }); x.value = (c[k] || []).join('\n'); return x; };
    const impTrackers = trackers('impressionTrackers'), clickTrackers = trackers('clickTrackers');
    const mime = el('select', { 'aria-label': 'Media type' }, [...['video/mp4', 'video/webm', 'application/x-mpegURL', 'application/dash+xml'].map(m => ['video', m]),
      ...['audio/mpeg', 'audio/aac', 'audio/mp4'].map(m => ['audio', m])].map(([kind, m]) => el('option', { value: m, text: m, selected: c.mimeType === m, 'data-kind': kind })));
    const file = el('input', { type: 'file', accept: 'image/png,image/jpeg,image/gif,image/webp', 'aria-label': 'Image file', id: 'creative-file' });
    const uploadNote = el('div', { class: 'muted', 'aria-live': 'polite' });
    const upload = async blob => {
      uploadNote.textContent = 'Uploading…';
      try {
        const r = await fetch('/api/v1/assets', { method: 'POST', body: blob, credentials: 'same-origin', headers: { 'X-CSRF-Token': session.csrfToken } });
        const a = await r.json();
        if (!r.ok) throw new ApiError(r.status, a);
        f.image.value = a.url;
        if (!f.width.value) f.width.value = a.width;
        if (!f.height.value) f.height.value = a.height;
        uploadNote.textContent = 'Uploaded: ' + a.width + '×' + a.height + ', ' + num(a.size) + ' bytes.';
        draw();
      } catch (e) { uploadNote.textContent = 'Could not upload: ' + e.message; }
    };
    file.addEventListener('change', () => { if (file.files[0]) upload(file.files[0]); });
    const drop = el('div', { class: 'drop', text: 'Drop an image here (PNG, JPEG, GIF or WebP), or choose a file:' }, file);
    drop.addEventListener('dragover', ev => { ev.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', ev => { ev.preventDefault(); drop.classList.remove('over'); if (ev.dataTransfer.files[0]) upload(ev.dataTransfer.files[0]); });
    const preview = el('div', { class: 'preview', id: 'creative-preview', 'aria-label': 'Preview' });
    const fd = (label, input, k) => { const x = field(label, input, 'creative.' + k); x.dataset.k = k; return x; };
    const parts = {
      size: el('div', { class: 'row' }, fd('Width (px)', f.width, 'width'), fd('Height (px)', f.height, 'height')),
      image: el('div', {}, drop, uploadNote, fd('Image', f.image, 'image')),
      html: fd('HTML (shown in a sandboxed frame; a tag\'s macros such as {clickUrl}, {pageUrl}, {random} are filled)', html, 'html'),
      trusted: fd('Trusted: render in a friendly frame of the page, not the sandbox (only a tag you would paste into the page yourself)', trusted, 'trusted'),
      trackers: el('div', { class: 'grid2' }, fd('Impression trackers (third parties\')', impTrackers, 'impressionTrackers'), fd('Click trackers', clickTrackers, 'clickTrackers')),
      native: el('div', { class: 'grid2' }, fd('Title', f.title, 'title'), fd('Body', f.body, 'body'), fd('Image URL', f.imageUrl, 'imageUrl'),
        fd('Call to action', f.cta, 'cta'), fd('Sponsored by', f.sponsoredBy, 'sponsoredBy')),
      video: el('div', { class: 'grid2' }, fd('VAST tag (a wrapper; leave the media empty)', f.vastTagUrl, 'vastTagUrl'), fd('Media URL', f.mediaUrl, 'mediaUrl'), fd('Type', mime, 'mimeType'), fd('Duration (ms)', f.durationMs, 'durationMs'),
        fd('Skippable after (ms)', f.skipOffsetMs, 'skipOffsetMs'), fd('Universal Ad ID registry', uidRegistry, 'universalAdId.registry'), fd('Universal Ad ID', uidValue, 'universalAdId.value'),
        fd('Open Measurement verifications (JSON)', verif, 'verifications')),
      click: fd('Click URL ({placement}, {campaign}, {ad} are filled in)', f.clickUrl, 'clickUrl'),
    };
    const shows = { image: ['size', 'image', 'click', 'trackers'], html: ['size', 'html', 'click', 'trackers'], native: ['native', 'click', 'trackers'],
      video: ['video', 'click', 'trackers'], audio: ['video', 'click', 'trackers'], tag: ['size', 'html', 'trusted', 'click', 'trackers'] };
    function draw() {
      const t = type.value;
      for (const [k, p] of Object.entries(parts)) p.hidden = !(shows[t] || []).includes(k);
      for (const o of mime.options) o.hidden = o.dataset.kind !== t; // a video's types, or an audio's
      if (mime.selectedOptions[0]?.hidden) mime.value = [...mime.options].find(o => !o.hidden)?.value || '';
      preview.hidden = !t;
      const w = +f.width.value || 300, h = +f.height.value || 250;
      if (t === 'image') preview.replaceChildren(f.image.value ? el('img', { src: f.image.value, width: w, height: h, alt: 'The image creative at its size' }) : el('p', { class: 'muted', text: 'Upload an image to see it here.' }));
      else if (t === 'html' || t === 'tag') {
        // Drawn where creatives serve, at a frame URL as they serve (GET
        // /api/v1/creative-preview, as creativeView does), which takes the
        // HTML by postMessage once it is ready.
        const frame = el('iframe', { sandbox: 'allow-scripts', width: w, height: h, title: 'The HTML creative at its size', referrerpolicy: 'no-referrer' });
        previewing = { frame, html: html.value };
        preview.replaceChildren(frame);
        previewURL().then(u => { frame.src = u; }, () => { frame.replaceWith(el('span', { class: 'muted', text: 'The preview could not be opened.' })); });
      } else if (t === 'native') {
        preview.replaceChildren(el('div', { class: 'native' }, f.imageUrl.value ? el('img', { src: f.imageUrl.value, alt: '' }) : null,
          el('strong', { text: f.title.value || 'Title' }), el('p', { text: f.body.value }), el('span', { class: 'button', text: f.cta.value || 'Learn more' }),
          el('small', { class: 'muted', text: f.sponsoredBy.value ? 'Sponsored by ' + f.sponsoredBy.value : 'Sponsored' })));
      } else if (t === 'video' || t === 'audio') preview.replaceChildren(el('p', { class: 'muted', text: f.vastTagUrl.value ? 'A wrapper of ' + f.vastTagUrl.value + ' (the player follows it).' :
        'A ' + (+f.durationMs.value / 1000 || 0) + ' s ' + t + ' from ' + (f.mediaUrl.value || '…') + ' (played by the ' + t + ' player).' }));
      preview.style.width = t === 'image' || t === 'html' || t === 'tag' ? w + 'px' : '';
    }
    type.addEventListener('change', draw);
    box.addEventListener('input', ev => { if (ev.target !== file) draw(); });
    box.append(field('Type', type, 'creative.type'), ...Object.values(parts), el('h3', { text: 'Preview' }), preview);
    draw();
    box.read = () => {
      const t = type.value;
      if (!t) return undefined;
      const out = { type: t };
      const keys = { image: ['width', 'height', 'image'], html: ['width', 'height'], tag: ['width', 'height'], native: ['title', 'body', 'imageUrl', 'cta', 'sponsoredBy'], video: ['mediaUrl', 'durationMs', 'skipOffsetMs', 'vastTagUrl'], audio: ['mediaUrl', 'durationMs', 'skipOffsetMs', 'vastTagUrl'] }[t];
      for (const k of [...keys, 'clickUrl']) if (f[k].value !== '') out[k] = f[k].type === 'number' ? +f[k].value : f[k].value;
      if (t === 'html' || t === 'tag') out.html = html.value;
      if (t === 'tag' && trusted.checked) out.trusted = true;
      if (lines(impTrackers.value).length) out.impressionTrackers = lines(impTrackers.value);
      if (lines(clickTrackers.value).length) out.clickTrackers = lines(clickTrackers.value);
      const linear = t === 'video' || t === 'audio';
      if (linear && !out.vastTagUrl) out.mimeType = mime.value; // a wrapper's media are the wrapped ad's
      if (linear && (uidRegistry.value.trim() || uidValue.value.trim())) out.universalAdId = { registry: uidRegistry.value.trim(), value: uidValue.value.trim() };
      if (linear && verif.value.trim()) {
        try { out.verifications = JSON.parse(verif.value); } catch (_) { out.verifications = verif.value; } // the API names what is wrong
      }
      return out;
    };
    return box;
  }

  // ---- Links.
  // A link is named by its code and, on a link domain, ?domain= (the API's
  // and the console's routes alike).
  const domainQ = l => l.domain ? '?domain=' + encodeURIComponent(l.domain) : '';
  const linkHash = l => '#/links/' + encodeURIComponent(l.code) + domainQ(l);
  const linkAPI = l => '/api/v1/links/' + encodeURIComponent(l.code) + domainQ(l);
  const shortURL = l => (l.domain ? 'https://' + l.domain : location.origin) + l.path;
  const tagChips = tags => el('span', { class: 'tags' }, (tags || []).map(t => el('a', { href: '#/links?tag=' + encodeURIComponent(t), class: 'tag', text: t })));
  route(/^\/links$/, 'links:read', async (_, q) => {
    const offset = +q.get('offset') || 0, limit = 50, text = q.get('q') || '', tag = q.get('tag') || '';
    const search = el('input', { type: 'search', value: text, placeholder: 'Codes starting with, or words of titles…', autocomplete: 'off' });
    const tagBox = el('input', { type: 'search', value: tag, placeholder: 'a tag', autocomplete: 'off', id: 'tag-filter' });
    const results = el('div', { 'aria-live': 'polite' });
    let seq = 0, timer = 0;
    const load = async o => {
      const mine = ++seq;
      let page;
      try {
        page = await api('GET', '/api/v1/links?limit=' + limit + '&offset=' + o + '&q=' + encodeURIComponent(search.value) +
          (tagBox.value ? '&tag=' + encodeURIComponent(tagBox.value) : ''));
      } catch (e) { results.replaceChildren(errorBox(e)); return; }
      if (mine !== seq) return;
      results.replaceChildren(table(['Code', 'Title', 'Tags', 'Destination', { t: 'Redirects', num: 1 }, 'Expires'], page.items.map(l => [
        el('a', { href: linkHash(l), text: (l.domain ? l.domain + '/' : '') + l.code }), l.title || '', tagChips(l.tags),
        l.destinations.length ? l.destinations.length + ' destinations' : l.url, num(l.clicks), l.expiresAt ? fmtTime(l.expiresAt) : 'never']),
      search.value || tagBox.value ? 'No link matches.' : 'No links yet.'),
      el('div', { class: 'pager' }, el('span', { class: 'muted', text: page.total ? (o + 1) + '–' + (o + page.items.length) + ' of ' + num(page.total) : '' }),
        o > 0 ? el('button', { type: 'button', text: 'Previous', onclick: () => load(Math.max(0, o - limit)) }) : null,
        o + limit < page.total ? el('button', { type: 'button', text: 'Next', onclick: () => load(o + limit) }) : null));
    };
    for (const box of [search, tagBox]) box.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => load(0), 200); });
    show(el('div', { class: 'row' }, el('h1', { text: 'Links' }),
      can('links:write') ? el('a', { href: '#/links/new', class: 'button', id: 'new-link', text: 'New link' }) : null,
      can('links:write') ? el('a', { href: '#/links/import', class: 'button', id: 'import-links', text: 'Import' }) : null,
      el('a', { href: '/api/v1/links/export', download: 'links.csv', id: 'export-links', text: 'Export CSV' })),
      el('div', { class: 'grid2' }, field('Search', search), field('Tag', tagBox)), results);
    await load(offset);
  });

  route(/^\/links\/new$/, 'links:write', async () => linkEditor(null, { destinations: [], rules: [], tags: [] }));
  route(/^\/links\/import$/, 'links:write', async () => linkImport());
  route(/^\/links\/([^/]+)\/edit$/, 'links:write', async ([code], q) =>
    linkEditor(code, await api('GET', linkAPI({ code, domain: q.get('domain') }))));

  // utmBuilder sets the utm_* parameters of a URL field.
  function utmBuilder(url) {
    const keys = ['source', 'medium', 'campaign', 'term', 'content'];
    const inputs = Object.fromEntries(keys.map(k => [k, el('input', { type: 'text', id: 'utm-' + k, placeholder: { source: 'newsletter', medium: 'email', campaign: 'spring_sale' }[k] || '' })]));
    const fill = () => {
      try {
        const u = new URL(url.value);
        for (const k of keys) inputs[k].value = u.searchParams.get('utm_' + k) || '';
      } catch (_) { /* not a URL yet */ }
    };
    fill();
    const apply = el('button', { type: 'button', id: 'utm-apply', text: 'Apply to the URL', onclick: () => {
      let u;
      try { u = new URL(url.value); } catch (_) { url.focus(); return; }
      for (const k of keys) {
        const v = inputs[k].value.trim();
        if (v) u.searchParams.set('utm_' + k, v); else u.searchParams.delete('utm_' + k);
      }
      url.value = u.toString();
    } });
    return el('details', { class: 'card', id: 'utm' }, el('summary', { text: 'UTM builder' }),
      el('div', { class: 'grid2' }, ...keys.map(k => field('utm_' + k, inputs[k]))), el('div', { class: 'row' }, apply));
  }

  // rowsEditor edits a list of items, each drawn by make(item, i) as an
  // element with a get() method; add makes a new one.
  function rowsEditor(name, items, make, addLabel) {
    const box = el('div', { class: 'rows', 'data-field': name });
    const rows = [];
    const redraw = () => box.replaceChildren(...rows.map((r, i) => { r.dataset.field = name + '[' + i + ']'; return r; }),
      el('button', { type: 'button', class: 'add', text: addLabel, onclick: () => { rows.push(row({})); redraw(); } }));
    const row = item => {
      const r = make(item);
      r.append(el('button', { type: 'button', class: 'remove', text: 'Remove', onclick: () => { rows.splice(rows.indexOf(r), 1); redraw(); } }));
      return r;
    };
    for (const it of items || []) rows.push(row(it));
    redraw();
    box.get = () => rows.map(r => r.get());
    return box;
  }

  const list = v => v.split(',').map(x => x.trim()).filter(Boolean);
  function ruleRow(r) {
    const w = r.when || {};
    const plats = ['android', 'ios', 'desktop'].map(p => el('label', { class: 'check' }, el('input', { type: 'checkbox', value: p, checked: (w.platform || []).includes(p) }), ' ' + p));
    const lang = el('input', { type: 'text', value: (w.language || []).join(', '), placeholder: 'de, pt-BR' });
    const country = el('input', { type: 'text', value: (w.country || []).join(', '), placeholder: 'DE, AT' });
    const query = el('input', { type: 'text', value: Object.entries(w.query || {}).map(([k, v]) => k + '=' + v).join('&'), placeholder: 'utm_source=newsletter' });
    const from = localInput(w.from), to = localInput(w.to);
    const url = el('input', { type: 'url', value: r.url || '', placeholder: 'https://…' });
    const box = el('fieldset', { class: 'rule' }, el('legend', { text: 'When' }),
      el('div', { class: 'field', 'data-field': '' }, el('span', { text: 'Platform ' }), ...plats),
      el('div', { class: 'grid2' }, field('Languages (BCP 47)', lang), field('Countries (ISO codes)', country)),
      el('div', { class: 'grid2' }, field('Query parameters', query), el('div', { class: 'grid2' }, field('From', from), field('To', to))),
      field('Then go to', url));
    box.get = () => {
      const when = {};
      const p = plats.map(l => l.firstChild).filter(c => c.checked).map(c => c.value);
      if (p.length) when.platform = p;
      if (lang.value.trim()) when.language = list(lang.value);
      if (country.value.trim()) when.country = list(country.value);
      if (query.value.trim()) when.query = Object.fromEntries(new URLSearchParams(query.value));
      if (from.value) when.from = fromLocal(from.value);
      if (to.value) when.to = fromLocal(to.value);
      return { when, url: url.value };
    };
    return box;
  }
  function destRow(d) {
    const url = el('input', { type: 'url', value: d.url || '', placeholder: 'https://…' });
    const weight = el('input', { type: 'number', min: 0, max: 1000, value: d.weight === undefined ? 50 : d.weight });
    const box = el('div', { class: 'grid2 dest' }, field('URL', url), field('Weight', weight));
    box.get = () => ({ url: url.value, weight: +weight.value });
    return box;
  }

  function linkEditor(code, l) {
    const c = el('input', { type: 'text', value: l.code || '', placeholder: 'generated when empty', disabled: !!code });
    const dom = el('input', { type: 'text', value: l.domain || '', placeholder: 'the default domain', disabled: !!code });
    const url = el('input', { type: 'url', value: l.url || '', placeholder: 'https://…' });
    const title = el('input', { type: 'text', value: l.title || '', maxlength: 200 });
    const tags = el('input', { type: 'text', value: (l.tags || []).join(', '), placeholder: 'spring, newsletter' });
    const exp = localInput(l.expiresAt);
    const max = el('input', { type: 'number', min: 1, value: l.maxClicks || '' });
    const red = el('select', {}, [301, 302, 307, 308].map(s => el('option', { value: s, text: String(s), selected: (l.redirect || 302) === s })));
    const ad = el('input', { type: 'text', inputmode: 'numeric', value: l.adId || '' });
    const rules = rowsEditor('rules', l.rules, ruleRow, 'Add a rule');
    const dests = rowsEditor('destinations', l.destinations, destRow, 'Add a destination');
    const form = el('form', { class: 'card', id: 'link-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const body = { url: url.value, redirect: +red.value, rules: rules.get(), destinations: dests.get(), tags: list(tags.value) };
      if (!code && c.value) body.code = c.value;
      if (!code && dom.value) body.domain = dom.value;
      if (title.value.trim()) body.title = title.value;
      if (exp.value) body.expiresAt = fromLocal(exp.value);
      if (max.value) body.maxClicks = +max.value;
      if (ad.value) body.adId = ad.value;
      if (!body.url && body.destinations.length) delete body.url;
      try {
        const r = code ? await api('PUT', linkAPI(l), body) : await api('POST', '/api/v1/links', body);
        go(linkHash(r));
      } catch (e) { showProblems(form, e); }
    } }, el('div', { class: 'grid2' }, field('Code', c, 'code'), field('Domain', dom, 'domain')),
    field('Destination URL', url, 'url'), utmBuilder(url),
    el('div', { class: 'grid2' }, field('Title', title, 'title'), field('Tags (comma-separated)', tags, 'tags')),
    el('div', { class: 'grid2' }, field('Expires (your time; empty: never)', exp, 'expiresAt'), field('Click limit (empty: none)', max, 'maxClicks')),
    el('div', { class: 'grid2' }, field('Redirect status', red, 'redirect'), field('Ad id (optional)', ad, 'adId')),
    el('h2', { text: 'Rules' }), el('p', { class: 'muted', text: 'Tried in order; the first whose conditions a visitor meets sends them to its URL.' }), rules,
    el('h2', { text: 'A/B destinations' }), el('p', { class: 'muted', text: 'Visitors no rule takes are shared by weight, each keeping theirs. Leave empty for the URL alone.' }), dests,
    el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary', text: code ? 'Save' : 'Create link' }), el('a', { href: code ? linkHash(l) : '#/links', text: 'Cancel' })));
    show(el('h1', { text: code ? 'Edit link ' + code : 'New link' }), form);
    (code ? url : c).focus();
  }

  // linkImport checks a CSV (a dry run) and imports it, following the job.
  function linkImport() {
    const file = el('input', { type: 'file', accept: '.csv,text/csv', id: 'import-file' });
    const existing = el('select', { id: 'import-existing' }, el('option', { value: 'update', text: 'update them' }), el('option', { value: 'skip', text: 'keep them' }));
    const out = el('div', { id: 'import-result', 'aria-live': 'polite' });
    const send = async dry => {
      if (!file.files.length) { file.focus(); return; }
      const csv = await file.files[0].text();
      let job;
      try { job = await api('POST', '/api/v1/links/import?dryRun=' + dry + '&existing=' + existing.value, csv, { type: 'text/csv' }); } catch (e) { out.replaceChildren(errorBox(e), problemList(e.body && e.body.problems)); return; }
      for (;;) {
        out.replaceChildren(el('p', { id: 'import-status', text: (dry ? 'Checked' : 'Import ' + job.status) + ': ' + job.format + ' format, ' + num(job.rows) + ' rows, ' + num(job.valid) + ' good; ' +
          num(job.created) + ' to create, ' + num(job.updated) + ' to update, ' + num(job.unchanged) + ' unchanged, ' + num(job.skipped) + ' kept' +
          (job.status === 'running' ? ' — ' + num(job.done) + ' stored so far' : '') + (job.error ? ' — ' + job.error : '') + '.' }),
        job.ignoredColumns.length ? el('p', { class: 'muted', text: 'Ignored columns: ' + job.ignoredColumns.join(', ') }) : null, problemList(job.problems));
        if (job.status !== 'running') return;
        await new Promise(r => setTimeout(r, 500));
        job = await api('GET', '/api/v1/links/import/' + job.id);
      }
    };
    show(el('h1', { text: 'Import links' }), el('div', { class: 'card' },
      el('p', {}, 'A CSV of links: Marquee\'s export (code, url, title, tags, …), or the export of Shlink, YOURLS or Bitly. A file with a bad row is imported only once it is fixed.'),
      field('File', file), field('Links whose codes are taken', existing),
      el('div', { class: 'row' }, el('button', { type: 'button', id: 'import-check', text: 'Check', onclick: () => send(true) }),
        el('button', { type: 'button', class: 'primary', id: 'import-run', text: 'Import', onclick: () => send(false) }))), out);
  }
  const problemList = p => {
    const keys = Object.keys(p || {}).sort((a, b) => (parseInt(a.slice(4)) || 0) - (parseInt(b.slice(4)) || 0));
    return keys.length ? el('ul', { id: 'import-problems' }, keys.map(k => el('li', { text: k + ': ' + p[k] }))) : null;
  };

  route(/^\/links\/([^/]+)$/, 'links:read', async ([code], q) => {
    const domain = q.get('domain') || '';
    const l = await api('GET', linkAPI({ code, domain }));
    const short = shortURL(l);
    const shortBox = el('input', { type: 'text', value: short, readonly: true, id: 'short-url' });
    const [copy, copied] = copyButton(short, shortBox, 'copy');
    const out = [el('h1', { text: 'Link ' + (l.domain ? l.domain + '/' : '') + l.code }),
      el('div', { class: 'grid2' }, el('div', { class: 'card' },
        l.title ? el('p', { id: 'link-title', text: l.title }) : null, l.tags.length ? el('p', {}, tagChips(l.tags)) : null,
        field('Short URL', shortBox), el('div', { class: 'row' }, copy, copied),
        el('p', {}, 'Goes to ', el('a', { href: l.url, rel: 'noreferrer', text: l.url }), ' with a ' + l.redirect + (l.rules.length || l.destinations.length ? ', unless a rule or the split says otherwise.' : '.')),
        el('p', { id: 'redirects', text: num(l.clicks) + ' redirects, bots included (the report below counts people only) · ' + (l.maxClicks ? 'limit ' + num(l.maxClicks) : 'no click limit') + ' · ' + (l.expiresAt ? 'expires ' + fmtTime(l.expiresAt) : 'never expires') }),
        l.adId ? el('p', {}, 'Counts clicks for ', el('a', { href: '#/ads/' + l.adId, text: 'ad ' + l.adId })) : null,
        can('links:write') ? el('div', { class: 'row' }, el('a', { href: '#/links/' + encodeURIComponent(code) + '/edit' + domainQ(l), class: 'button', id: 'edit', text: 'Edit' }),
          confirmButton('Delete', 'Delete this link? Its short URL will answer 404.', async () => {
            try { await api('DELETE', linkAPI(l)); go('#/links'); } catch (e) { main().prepend(errorBox(e)); }
          })) : null),
      qrCard(short, l.code))];
    if (l.rules.length) {
      out.push(el('div', { class: 'card', id: 'rules' }, el('h2', { text: 'Rules' }), el('ol', {}, l.rules.map(r => el('li', {},
        Object.entries(r.when).map(([k, v]) => k + ' ' + (Array.isArray(v) ? v.join(' or ') : typeof v === 'object' ? Object.entries(v).map(([a, b]) => a + '=' + b).join(' and ') : v)).join('; ') + ' → ',
        el('a', { href: r.url, rel: 'noreferrer', text: r.url }))))));
    }
    if (l.destinations.length) out.push(await destinationsCard(l, q));
    if (can('reports:read')) out.push(await reportSection('link', code, q, linkHash(l), l.domain ? '&domain=' + encodeURIComponent(l.domain) : ''));
    show(...out);
  });

  // destinationsCard shows a split's destinations with their clicks and
  // conversions in the range, and (to a writer) a button that promotes
  // one: its weight to 100, the others' to 0.
  async function destinationsCard(l, q) {
    let parts = [];
    if (can('reports:read')) {
      const rg = rangeOf(q);
      try { parts = (await api('GET', linkAPI({ code: l.code }) + '/stats' + statsQuery(rg, (l.domain ? '&domain=' + encodeURIComponent(l.domain) : '') + '&by=destination'))).breakdown || []; } catch (_) { /* shown without figures */ }
    }
    const total = l.destinations.reduce((n, d) => n + d.weight, 0);
    const of = i => parts.find(p => p.destination === i) || {};
    return el('div', { class: 'card', id: 'destinations' }, el('h2', { text: 'A/B destinations' }),
      table(['Destination', { t: 'Share', num: 1 }, { t: 'Clicks', num: 1 }, { t: 'Conversions', num: 1 }, ''], l.destinations.map((d, i) => [
        el('a', { href: d.url, rel: 'noreferrer', text: d.url }), pct(total ? d.weight / total : 0), num(of(i).clicks || 0), num(of(i).conversions || 0),
        can('links:write') && d.weight !== total ? confirmButton('Promote', 'Send every visitor to ' + d.url + '? (its weight becomes 100, the others 0)', async () => {
          const body = { url: l.url, redirect: l.redirect, title: l.title || undefined, tags: l.tags, rules: l.rules,
            destinations: l.destinations.map((x, j) => ({ url: x.url, weight: j === i ? 100 : 0 })) };
          if (l.expiresAt) body.expiresAt = l.expiresAt;
          if (l.maxClicks) body.maxClicks = l.maxClicks;
          if (l.adId) body.adId = l.adId;
          try { await api('PUT', linkAPI(l), body); render(); } catch (e) { main().prepend(errorBox(e)); }
        }) : '']), ''),
      el('p', { class: 'muted', text: 'Clicks by the destination the split picked; conversions by the visitor\'s destination. Counted by whole days.' }));
  }

  // qrCard draws the short URL's QR code (qrcode-generator computes the
  // modules) as SVG, with SVG and PNG downloads.
  function qrCard(text, name) {
    const qr = qrcode(0, 'M');
    qr.addData(text);
    qr.make();
    const n = qr.getModuleCount(), m = 4, size = n + 2 * m;
    let d = '';
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) d += 'M' + (c + m) + ' ' + (r + m) + 'h1v1h-1z';
    const svgText = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ' + size + ' ' + size + '" shape-rendering="crispEdges">' +
      '<rect width="' + size + '" height="' + size + '" fill="#fff"/><path d="' + d + '" fill="#000"/></svg>';
    const svg = new DOMParser().parseFromString(svgText, 'image/svg+xml').documentElement;
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'QR code of ' + text);
    const svgURL = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
    const png = el('a', { href: '#', id: 'qr-png', text: 'PNG', onclick: ev => {
      ev.preventDefault();
      const scale = 10, cv = document.createElement('canvas');
      cv.width = cv.height = size * scale;
      const g = cv.getContext('2d');
      g.fillStyle = '#fff'; g.fillRect(0, 0, cv.width, cv.height); g.fillStyle = '#000';
      for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) g.fillRect((c + m) * scale, (r + m) * scale, scale, scale);
      cv.toBlob(b => { const a = el('a', { href: URL.createObjectURL(b), download: name + '.png' }); document.body.append(a); a.click(); a.remove(); }, 'image/png');
    } });
    return el('div', { class: 'card qr', id: 'qr' }, el('h2', { text: 'QR code' }), svg,
      el('p', {}, 'Download: ', el('a', { href: svgURL, download: name + '.svg', id: 'qr-svg', text: 'SVG' }), ' · ', png));
  }

  // ---- Live: this instance, from GET /api/v1/live every 3 s.
  let liveTimer = 0;
  window.addEventListener('hashchange', () => { if (here().path !== '/live') clearInterval(liveTimer); });
  route(/^\/live$/, null, async () => {
    const keep = 40, hist = {};
    let last = null;
    const panels = el('div', { class: 'spark' });
    const status = el('p', { 'aria-live': 'polite' });
    show(el('h1', { text: 'Live: this instance' }), el('p', { class: 'muted', text: 'Refreshed every 3 seconds from GET /api/v1/live.' }), status, panels);
    const sum = (s, f = () => true) => (s || []).filter(f).reduce((a, x) => a + (x.value || 0), 0);
    const point = (k, v) => { (hist[k] = hist[k] || []).push(v); if (hist[k].length > keep) hist[k].shift(); };
    const p99 = (now, before) => { // of the requests between the two, from the buckets' differences
      const b = new Map();
      for (const s of now || []) for (const [le, c] of s.buckets || []) b.set(le, (b.get(le) || 0) + c);
      for (const s of before || []) for (const [le, c] of s.buckets || []) b.set(le, (b.get(le) || 0) - c);
      const les = [...b.keys()].sort((x, y) => x - y), total = Math.max(...[...b.values()], 0);
      if (!total) return null;
      for (const le of les) if (b.get(le) >= 0.99 * total) return le * 1000;
      return null;
    };
    const tick = async () => {
      let cur;
      try { cur = await api('GET', '/api/v1/live'); } catch (e) { status.replaceChildren(errorBox(e)); return; }
      const M = cur.metrics;
      if (last) {
        const dt = (Date.parse(cur.time) - Date.parse(last.time)) / 1000 || 1;
        const L = last.metrics;
        const byRoute = {};
        for (const s of M.marquee_http_requests_total || []) byRoute[s.labels.route] = (byRoute[s.labels.route] || 0) + s.value;
        for (const s of L.marquee_http_requests_total || []) byRoute[s.labels.route] = (byRoute[s.labels.route] || 0) - s.value;
        point('Requests/s, all routes', Object.values(byRoute).reduce((a, x) => a + x, 0) / dt);
        const hot = Object.entries(byRoute).sort((a, b) => b[1] - a[1]).slice(0, 4);
        for (const [r, n] of hot) point('Requests/s, ' + r, n / dt);
        const err = f => sum(f.marquee_http_requests_total, s => +s.labels.status >= 500);
        point('Errors/s (5xx)', (err(M) - err(L)) / dt);
        point('p99 latency, ms', p99(M.marquee_http_request_duration_seconds, L.marquee_http_request_duration_seconds));
        for (const c of ['link', 'ad']) {
          const h = f => sum(f.marquee_cache_hits_total, s => s.labels.cache === c), m = f => sum(f.marquee_cache_misses_total, s => s.labels.cache === c);
          const dh = h(M) - h(L), dm = m(M) - m(L);
          point('Cache hit ratio, ' + c + 's', dh + dm ? dh / (dh + dm) : null);
        }
        point('Events/s', (sum(M.marquee_events_accepted_total) - sum(L.marquee_events_accepted_total)) / dt);
      }
      point('Spool bytes', sum(M.marquee_events_spool_bytes));
      point('Feed lag, s', sum(M.marquee_feed_apply_lag_seconds));
      last = cur;
      status.replaceChildren(el('span', {}, 'Store: ', el('span', { class: cur.ready.store === 'up' ? 'state-up' : 'state-down', id: 'store-state', text: cur.ready.store }),
        cur.ready.events ? ' · events: ' + cur.ready.events : '', ' · as of ' + new Date(cur.time).toLocaleTimeString()));
      panels.replaceChildren(...Object.entries(hist).map(([k, v]) => spark(k, v)));
    };
    await tick();
    clearInterval(liveTimer);
    liveTimer = setInterval(() => { if (here().path === '/live') tick(); else clearInterval(liveTimer); }, 3000);
  });
  function spark(label, values) {
    const lastV = values[values.length - 1];
    const box = el('div', { class: 'tile', 'data-spark': label }, el('div', { class: 'k', text: label }),
      el('div', { class: 'v', text: lastV === null || lastV === undefined ? '—' : (Math.abs(lastV) < 10 ? lastV.toFixed(2) : num(Math.round(lastV))) }));
    if (values.length > 1) {
      const xs = values.map((_, i) => i);
      requestAnimationFrame(() => new uPlot({ width: 230, height: 50, legend: { show: false }, cursor: { show: false },
        axes: [{ show: false }, { show: false }], series: [{}, { stroke: '#2456d6', width: 1.5 }] }, [xs, values], box));
    }
    return box;
  }

  // ---- Your account: who you are, and your password.
  route(/^\/account$/, null, async () => {
    const out = [el('h1', { text: 'Your account' }),
      el('p', { text: session.user ? 'Signed in as ' + session.user.email + ', ' + session.user.role + '.' : 'Signed in with the key ' + session.actor + '.' }),
      el('p', { class: 'muted', text: 'Can: ' + session.scopes.join(', ') + '.' })];
    if (session.user) {
      const cur = el('input', { type: 'password', autocomplete: 'current-password', required: true });
      const pw = el('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: 12 });
      const form = el('form', { class: 'card', id: 'password-form', novalidate: true, onsubmit: async ev => {
        ev.preventDefault();
        try {
          await api('PUT', '/api/v1/session/password', { current: cur.value, password: pw.value });
          session = null;
          go('#/signin');
        } catch (e) { showProblems(form, e); }
      } }, el('h2', { text: 'Change your password' }), field('Current password', cur, 'current'),
      field('New password (12 to 72 bytes)', pw, 'password'), el('p', { class: 'muted', text: 'Every session of yours ends: sign in again with the new password.' }),
      el('button', { type: 'submit', class: 'primary', text: 'Change password' }));
      out.push(form);
    }
    show(...out);
  });

  // ---- Users, keys and audit (keys:admin).
  // marquee.Scopes, in its order (console_test holds them equal).
  const allScopes = ['ads:read', 'ads:write', 'links:read', 'links:write', 'campaigns:read', 'campaigns:write', 'reports:read', 'keys:admin',
    'webhooks:admin', 'privacy:admin', 'conversions:write', 'campaigns:submit', 'campaigns:approve', 'billing:write'];
  // What a key bound to advertisers or sites may hold (docs/api.md#accounts).
  const boundScopes = { advertisers: ['ads:read', 'ads:write', 'campaigns:read', 'reports:read', 'conversions:write', 'campaigns:submit', 'billing:write'], sites: ['ads:read', 'campaigns:read', 'reports:read'] };
  const teamRoles = ['owner', 'admin', 'editor', 'viewer'];
  const roleText = { owner: 'owner', admin: 'admin', editor: 'editor', viewer: 'viewer', advertiser: 'advertiser (its advertisers only)', publisher: 'publisher (its sites only)' };
  // boundChoices reads the advertisers and sites an account can be bound
  // to; boundText says what a user or key is bound to.
  const boundChoices = async () => {
    if (!can('campaigns:read')) return { advertisers: [], sites: [] }; // a keys:admin key alone binds by the API
    const [a, s] = await Promise.all([api('GET', '/api/v1/advertisers?state=active&limit=1000'), api('GET', '/api/v1/sites')]);
    return { advertisers: a.items.map(x => [String(x.id), x.name]), sites: s.sites.map(x => [x.name, x.name]) };
  };
  const boundText = (x, choices) => {
    const name = (list, v) => ((list.find(([id]) => id === String(v)) || [])[1]) || v;
    if ((x.advertisers || []).length) return 'advertisers: ' + x.advertisers.map(v => name(choices.advertisers, v)).join(', ');
    if ((x.sites || []).length) return 'sites: ' + x.sites.join(', ');
    return 'the ad team';
  };
  // boundPicker is a group of checkboxes of kind ('advertisers' or
  // 'sites'), its values read by read().
  const boundPicker = (kind, choices, label) => {
    const box = el('div', { class: 'checks', role: 'group', 'aria-label': label, id: kind + '-picker' },
      choices[kind].length ? choices[kind].map(([v, t]) => el('label', {}, el('input', { type: 'checkbox', value: v }), t)) : el('span', { class: 'muted', text: 'None yet.' }));
    box.read = () => [...box.querySelectorAll('input:checked')].map(i => i.value);
    return box;
  };
  route(/^\/users$/, 'keys:admin', async () => {
    const [{ users }, choices] = await Promise.all([api('GET', '/api/v1/users'), boundChoices()]);
    const email = el('input', { type: 'email', required: true }), pw = el('input', { type: 'password', autocomplete: 'new-password', minlength: 12 });
    const role = el('select', { id: 'user-role' }, Object.keys(roleText).map(r => el('option', { value: r, text: roleText[r], selected: r === 'viewer' })));
    const advs = boundPicker('advertisers', choices, 'Its advertisers'), sites = boundPicker('sites', choices, 'Its sites');
    const advField = field('Its advertisers', advs, 'advertisers'), siteField = field('Its sites', sites, 'sites');
    const sync = () => { advField.hidden = role.value !== 'advertiser'; siteField.hidden = role.value !== 'publisher'; };
    role.addEventListener('change', sync);
    sync();
    const invited = el('div');
    // showInvite shows the one-time link just made for u (mailed, or to
    // give them) and what their account will see.
    const showInvite = u => invited.replaceChildren(el('div', { class: 'notice', role: 'status', id: 'invite' }, el('p', { text: (u.invite.sent ?
      'An invitation was sent to ' + u.email + '. Its link sets their password, once, until ' + fmtTime(u.invite.expiresAt) + '.' :
      'No mail is configured: give ' + u.email + ' this link (it sets their password, once, until ' + fmtTime(u.invite.expiresAt) + '). It is not shown again.') +
      ' They will see ' + u.invite.sees + '.' }),
    u.invite.sent ? null : el('div', { class: 'secret', id: 'invite-url', text: u.invite.url }), u.invite.sent ? null : copyButton(u.invite.url),
    ' ', el('button', { type: 'button', text: 'Done', onclick: () => render() })));
    // After each add the form is empty again: the next user gets only
    // what is chosen for them.
    const reset = () => {
      email.value = ''; pw.value = ''; role.value = 'viewer';
      for (const i of form.querySelectorAll('input[type=checkbox]')) i.checked = false;
      sync();
    };
    const form = el('form', { class: 'card', id: 'user-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const body = { email: email.value, role: role.value };
      if (pw.value) body.password = pw.value;
      if (role.value === 'advertiser') body.advertisers = advs.read();
      if (role.value === 'publisher') body.sites = sites.read();
      try {
        const u = await api('POST', '/api/v1/users', body);
        if (!u.invite) return render();
        reset();
        showInvite(u);
      } catch (e) { showProblems(form, e); }
    } }, el('h2', { text: 'Add a user' }), el('div', { class: 'grid2' }, field('Email', email, 'email'), field('Role', role, 'role')), advField, siteField,
    field('Password (12 to 72 bytes)', pw, 'password', 'Leave it empty to invite them: they get a one-time link to set their own.'),
    el('button', { type: 'submit', class: 'primary', text: 'Add user' }));
    const msg = el('div');
    const me = session.user ? session.user.id : null;
    show(el('h1', { text: 'Users' }), msg, invited, table(['Email', 'Role', 'Sees', 'Added', ''], users.map(u => {
      const sees = boundText(u, choices);
      if (u.id === me) return [u.email + ' (you)', u.role, sees, fmtTime(u.createdAt), el('a', { href: '#/account', text: 'Your account' })];
      const remove = confirmButton('Remove', 'Remove ' + u.email + '? They are signed out at once.', async () => {
        try { await api('DELETE', '/api/v1/users/' + u.id); render(); } catch (e) { msg.replaceChildren(errorBox(e)); }
      });
      // A new one-time link: an invitation sent again, or a password reset.
      const relink = confirmButton('New link', 'Send ' + u.email + ' a new link to set their password? Their password, their sessions and any earlier link stop working.', async () => {
        try { showInvite(await api('POST', '/api/v1/users/' + u.id + '/invitation')); } catch (e) { msg.replaceChildren(errorBox(e)); }
      });
      const actions = el('span', { class: 'actions' }, relink, ' ', remove);
      // An advertiser's or publisher's account: what it sees is edited
      // here (it is signed out when it changes).
      if (!teamRoles.includes(u.role)) {
        const kind = u.role === 'advertiser' ? 'advertisers' : 'sites';
        const pick = boundPicker(kind, choices, 'What ' + u.email + ' sees');
        pick.id = 'sees-' + u.id;
        for (const i of pick.querySelectorAll('input')) i.checked = (u[kind] || []).map(String).includes(i.value);
        const edit = el('form', { class: 'sees-edit', hidden: true, onsubmit: async ev => {
          ev.preventDefault();
          try { await api('PUT', '/api/v1/users/' + u.id, { [kind]: pick.read() }); render(); } catch (e) { msg.replaceChildren(errorBox(e)); }
        } }, pick, el('button', { type: 'submit', class: 'primary', text: 'Save' }), ' ', el('button', { type: 'button', text: 'Cancel', onclick: () => { edit.hidden = true; } }));
        const open = el('button', { type: 'button', text: 'Edit', 'aria-label': 'Edit what ' + u.email + ' sees', onclick: () => { edit.hidden = false; } });
        return [u.email, el('span', { class: 'role' }, u.role), el('span', {}, sees, ' ', open, edit), fmtTime(u.createdAt), actions];
      }
      // A role change ends that user's sessions: asked before it is made.
      const sel = el('select', { 'aria-label': 'Role of ' + u.email }, teamRoles.map(r => el('option', { value: r, text: r, selected: r === u.role })));
      const ask = el('span', { class: 'confirm' });
      sel.addEventListener('change', () => {
        const to = sel.value;
        const cancel = () => { sel.value = u.role; ask.replaceChildren(); };
        const yes = el('button', { type: 'button', class: 'primary', text: 'Yes, make ' + to, onclick: async () => {
          try { await api('PUT', '/api/v1/users/' + u.id, { role: to }); u.role = to; ask.replaceChildren(); msg.replaceChildren(el('div', { class: 'notice', role: 'status', text: u.email + ' is now ' + to + '.' })); } catch (e) { cancel(); msg.replaceChildren(errorBox(e)); }
        } });
        ask.replaceChildren(el('span', { role: 'alert', text: ' Make ' + u.email + ' ' + to + '? They will be signed out. ' }), yes, ' ', el('button', { type: 'button', text: 'Cancel', onclick: cancel }));
        yes.focus();
      });
      return [u.email, el('span', {}, sel, ask), sees, fmtTime(u.createdAt), actions];
    }), 'No users yet.'), form);
  });

  route(/^\/keys$/, 'keys:admin', async () => {
    const [{ keys }, choices] = await Promise.all([api('GET', '/api/v1/keys'), boundChoices()]);
    const name = el('input', { type: 'text', required: true, maxlength: 100 });
    const scopes = el('div', { class: 'checks', role: 'group', 'aria-label': 'Scopes' }, allScopes.map(s => el('label', {}, el('input', { type: 'checkbox', value: s }), s)));
    const bind = el('select', { id: 'key-bound' }, [['', 'The ad team (not bound)'], ['advertisers', 'Advertisers (their postbacks, reports, drafts)'], ['sites', 'Sites (their reports)']].map(([v, t]) => el('option', { value: v, text: t })));
    const advs = boundPicker('advertisers', choices, 'Its advertisers'), sites = boundPicker('sites', choices, 'Its sites');
    const advField = field('Its advertisers', advs, 'advertisers'), siteField = field('Its sites', sites, 'sites');
    // A bound key may hold only the scopes of its kind: the others are
    // disabled (and unchecked) while it is bound.
    const sync = () => {
      advField.hidden = bind.value !== 'advertisers';
      siteField.hidden = bind.value !== 'sites';
      for (const i of scopes.querySelectorAll('input')) {
        i.disabled = !!bind.value && !boundScopes[bind.value].includes(i.value);
        if (i.disabled) i.checked = false;
      }
    };
    bind.addEventListener('change', sync);
    sync();
    const exp = localInput('');
    const secret = el('div');
    const form = el('form', { class: 'card', id: 'key-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const body = { name: name.value, scopes: [...scopes.querySelectorAll('input:checked')].map(i => i.value) };
      if (bind.value === 'advertisers') body.advertisers = advs.read();
      if (bind.value === 'sites') body.sites = sites.read();
      if (exp.value) body.expiresAt = fromLocal(exp.value);
      try {
        const k = await api('POST', '/api/v1/keys', body);
        secret.replaceChildren(el('div', { class: 'notice', role: 'status' }, el('p', { text: 'The key "' + k.name + '". Copy it now: it is not shown again.' }),
          el('div', { class: 'secret', id: 'key-secret', text: k.key }), copyButton(k.key),
          ' ', el('button', { type: 'button', text: 'Done', onclick: () => render() })));
      } catch (e) { showProblems(form, e); }
    } }, el('h2', { text: 'Create a key' }), field('Name', name, 'name'), field('For', bind, 'bound', 'An advertiser\'s postback key: bound to its advertiser, with conversions:write.'),
    advField, siteField, field('Scopes', scopes, 'scopes'), field('Expires (optional, your time)', exp, 'expiresAt'),
    el('button', { type: 'submit', class: 'primary', text: 'Create key' }));
    const msg = el('div');
    show(el('h1', { text: 'API keys' }), msg, secret, table(['Name', 'Prefix', 'Scopes', 'Sees', 'Created', 'Last used', 'State', ''], keys.map(k => [k.name, k.prefix, k.scopes.join(', '), boundText(k, choices),
      fmtTime(k.createdAt) + ' by ' + k.createdBy, fmtTime(k.lastUsedAt), k.revokedAt ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) < Date.now() ? 'expired' : 'active',
      k.revokedAt ? '' : confirmButton('Revoke', 'Revoke "' + k.name + '"? Clients using it are refused at once.', async () => {
        try { await api('DELETE', '/api/v1/keys/' + k.id); render(); } catch (e) { msg.replaceChildren(errorBox(e)); }
      })]), 'No keys yet.'), form);
  });

  // Webhooks: the list with a create form (the secret shown once), and
  // each webhook's page with its delivery log and a test event.
  // webhookEvents are what a webhook can ask for (marquee.WebhookEvents).
  const webhookEvents = ['click', 'conversion', 'impression', 'site.quality'];
  route(/^\/webhooks$/, 'webhooks:admin', async () => {
    const { webhooks } = await api('GET', '/api/v1/webhooks');
    const url = el('input', { type: 'url', required: true, placeholder: 'https://hooks.example.com/marquee' });
    const events = el('div', { class: 'checks', role: 'group', 'aria-label': 'Events' }, webhookEvents.map(e => el('label', {}, el('input', { type: 'checkbox', value: e, checked: e === 'click' }), e)));
    const kind = el('select', {}, [['', 'every event'], ['link', 'one link (code)'], ['adId', 'one ad (id)'], ['campaignId', 'one campaign (id)']].map(([v, t]) => el('option', { value: v, text: t })));
    const target = el('input', { type: 'text', placeholder: 'code or id' });
    const unverified = el('input', { type: 'checkbox', id: 'webhook-unverified' });
    const secret = el('div');
    const form = el('form', { class: 'card', id: 'webhook-form', novalidate: true, onsubmit: async ev => {
      ev.preventDefault();
      const body = { url: url.value, events: [...events.querySelectorAll('input:checked')].map(i => i.value), unverified: unverified.checked };
      if (kind.value === 'link') body.link = target.value;
      else if (kind.value) body[kind.value] = +target.value;
      try {
        const w = await api('POST', '/api/v1/webhooks', body);
        secret.replaceChildren(el('div', { class: 'notice', role: 'status' }, el('p', { text: 'Webhook ' + w.id + ' signs its deliveries with this secret. Copy it now: it is not shown again.' }),
          el('div', { class: 'secret', id: 'webhook-secret', text: w.secret }), copyButton(w.secret),
          ' ', el('button', { type: 'button', text: 'Done', onclick: () => render() })));
      } catch (e) { showProblems(form, e); }
    } }, el('h2', { text: 'Create a webhook' }), field('URL (https)', url, 'url'), field('Events', events, 'events'),
    el('div', { class: 'row' }, field('For', kind, 'link'), field('Code or id', target, 'adId')),
    el('label', { class: 'check' }, unverified, ' Also events no decision vouches for (beacons naming an ad or campaign, clicks whose impression did not count)'),
    el('button', { type: 'submit', class: 'primary', text: 'Create webhook' }));
    const targetOf = w => w.link ? 'link ' + w.link : w.adId ? 'ad ' + w.adId : w.campaignId ? 'campaign ' + w.campaignId : 'everything';
    show(el('h1', { text: 'Webhooks' }), secret, table(['Id', 'URL', 'Events', 'For', 'State'], webhooks.map(w => [el('a', { href: '#/webhooks/' + w.id, text: String(w.id) }),
      w.url, w.events.join(', '), targetOf(w), w.state + (w.disabledReason ? ': ' + w.disabledReason : '')]), 'No webhooks yet.'), form);
  });

  route(/^\/webhooks\/(\d+)$/, 'webhooks:admin', async ([id]) => {
    const w = await api('GET', '/api/v1/webhooks/' + id);
    const { deliveries } = await api('GET', '/api/v1/webhooks/' + id + '/deliveries?limit=100');
    const msg = el('div', { 'aria-live': 'polite' });
    const act = (text, path, done) => el('button', { type: 'button', id: text.toLowerCase().replace(/ .*/, '') + '-webhook', text, onclick: async () => {
      try { const r = await api('POST', '/api/v1/webhooks/' + id + path); if (done) done(r); else render(); } catch (e) { msg.replaceChildren(errorBox(e)); }
    } });
    const test = act('Send test event', '/test', d => {
      msg.replaceChildren(el('p', { class: d.error ? 'error' : 'notice', id: 'test-result', text: d.error ? 'The test event failed: ' + d.error : 'Delivered: status ' + d.status + ' in ' + d.latencyMs + ' ms.' }));
      setTimeout(render, 1500);
    });
    show(el('h1', { text: 'Webhook ' + id }),
      el('dl', { class: 'facts' }, [['URL', w.url], ['Events', w.events.join(', ')], ['For', w.link ? 'link ' + w.link : w.adId ? 'ad ' + w.adId : w.campaignId ? 'campaign ' + w.campaignId : 'everything'],
        ['Delivers', w.unverified ? 'every event of its types' : 'verified events and redirects only'],
        ['State', w.state], ['Why disabled', w.disabledReason || '—'], ['Created', fmtTime(w.createdAt)]].flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })])),
      el('div', { class: 'row' }, test, ' ', w.state === 'active' ? act('Disable', '/disable') : act('Enable', '/enable'), ' ',
        confirmButton('Delete', 'Delete webhook ' + id + ' and its delivery log?', async () => {
          try { await api('DELETE', '/api/v1/webhooks/' + id); go('#/webhooks'); } catch (e) { msg.replaceChildren(errorBox(e)); }
        })), msg,
      el('h2', { text: 'Deliveries' }), table(['When', 'Message', 'Attempt', 'Events', 'Status', 'Latency', 'Error'], deliveries.map(d => [fmtTime(d.at), d.messageId, String(d.attempt),
        String(d.events), d.status ? String(d.status) : 'no answer', d.latencyMs + ' ms', d.error || '']), 'No delivery yet.'));
  });

  route(/^\/audit$/, 'keys:admin', async (_, q) => {
    const offset = +q.get('offset') || 0, limit = 50;
    const actor = el('input', { type: 'text', value: q.get('actor') || '' });
    // The kinds the audit log records: marquee.AuditEntities (a test holds them equal).
    const kinds = ['ad', 'link', 'advertiser', 'campaign', 'placement', 'site', 'deal', 'demandPartner', 'topUp', 'invoice', 'statement', 'savedReport', 'key', 'user', 'session', 'webhook', 'subject', 'setting'];
    const entity = el('select', {}, [''].concat(kinds).map(e => el('option', { value: e, text: e || 'every kind', selected: e === (q.get('entity') || '') })));
    const qs = o => 'actor=' + encodeURIComponent(actor.value) + '&entity=' + entity.value + '&offset=' + o;
    const [page, cn, an] = await Promise.all([api('GET', '/api/v1/audit?limit=' + limit + '&' + qs(offset)), campaignNames(), advertiserNames()]);
    // What an entry changed, named and linked where the console has a page for it.
    const what = e => {
      if (!e.entityId) return e.action + ' ' + e.entity;
      const named = { campaign: () => campaignLink(e.entityId, cn), advertiser: () => advertiserLink(e.entityId, an),
        ad: () => el('a', { href: '#/ads/' + e.entityId, text: e.entityId }), placement: () => el('a', { href: '#/placements/' + e.entityId, text: e.entityId }),
        link: () => el('a', { href: '#/links/' + encodeURIComponent(e.entityId), text: e.entityId }) }[e.entity];
      return named ? [e.action + ' ' + e.entity + ' ', named()] : e.action + ' ' + e.entity + ' ' + e.entityId;
    };
    const form = el('form', { class: 'row', onsubmit: ev => { ev.preventDefault(); go('#/audit?' + qs(0)); } },
      field('Actor (exact)', actor), field('Kind', entity), el('button', { type: 'submit', text: 'Filter' }));
    // A change of money shows what it held before and after.
    const change = e => (e.before || e.after) ? el('details', {}, el('summary', { text: e.before && e.after ? 'before → after' : e.after ? 'after' : 'before' }),
      e.before ? el('pre', { class: 'before', text: JSON.stringify(e.before, null, 1) }) : null,
      e.after ? el('pre', { class: 'after', text: JSON.stringify(e.after, null, 1) }) : null) : '';
    show(el('h1', { text: 'Audit log' }), form, table(['When', 'Who', 'What', 'Fields', 'Change', 'From'], page.entries.map(e => [fmtTime(e.at), e.actor,
      el('span', {}, what(e)), (e.fields || []).join(', '), change(e), e.ip]), 'Nothing recorded with these filters.'),
    el('div', { class: 'pager' }, el('span', { class: 'muted', text: page.total ? (offset + 1) + '–' + (offset + page.entries.length) + ' of ' + num(page.total) : '' }),
      offset > 0 ? el('a', { href: '#/audit?' + qs(Math.max(0, offset - limit)), text: 'Newer' }) : null,
      offset + limit < page.total ? el('a', { href: '#/audit?' + qs(offset + limit), text: 'Older' }) : null));
  });
})();
