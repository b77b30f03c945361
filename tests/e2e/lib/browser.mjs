// A minimal "browser" for crmd's login and consent pages: fetch with a cookie jar,
// manual redirects and a small HTML form parser. It plays the user who signs in and
// allows the request, and stops at the redirect to the client's redirect_uri (nobody
// has to listen there: the code is read from the Location header).

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", '#x27': "'" };

export function unescapeHtml(s) {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (m, e) => {
    if (e in ENTITIES) return ENTITIES[e];
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return m;
  });
}

function parseAttributes(tag) {
  const attrs = {};
  const re = /([^\s=\/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
  // Skip the tag name.
  const body = tag.replace(/^<\s*[a-zA-Z]+/, '').replace(/\/?>$/, '');
  let m;
  while ((m = re.exec(body)) !== null) {
    const value = m[2] ?? m[3] ?? m[4] ?? '';
    attrs[m[1].toLowerCase()] = unescapeHtml(value);
  }
  return attrs;
}

// Returns [{action, method, fields: [{tag, type, name, value, checked}]}] for each <form>.
export function parseForms(html) {
  const forms = [];
  const formRe = /<form\b[^>]*>([\s\S]*?)<\/form>/gi;
  let fm;
  while ((fm = formRe.exec(html)) !== null) {
    const open = fm[0].match(/^<form\b[^>]*>/i)[0];
    const fa = parseAttributes(open);
    const fields = [];
    const fieldRe = /<(input|button|select|textarea)\b[^>]*>/gi;
    let im;
    while ((im = fieldRe.exec(fm[1])) !== null) {
      const tag = im[1].toLowerCase();
      const a = parseAttributes(im[0]);
      fields.push({
        tag,
        type: (a.type ?? (tag === 'button' ? 'submit' : 'text')).toLowerCase(),
        name: a.name,
        value: a.value ?? (a.type === 'checkbox' ? 'on' : ''),
        checked: 'checked' in a,
      });
    }
    forms.push({ action: fa.action ?? '', method: (fa.method ?? 'get').toUpperCase(), fields });
  }
  return forms;
}

export class Browser {
  constructor({ log = () => {} } = {}) {
    this.cookies = new Map(); // origin -> Map(name -> value)
    this.log = log;
  }

  cookieHeader(url) {
    const jar = this.cookies.get(new URL(url).origin);
    if (!jar || jar.size === 0) return undefined;
    return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  storeCookies(url, res) {
    const origin = new URL(url).origin;
    const list = res.headers.getSetCookie?.() ?? [];
    for (const c of list) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      if (!this.cookies.has(origin)) this.cookies.set(origin, new Map());
      this.cookies.get(origin).set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }

  // One request without following redirects.
  async request(url, { method = 'GET', form } = {}) {
    const headers = { Accept: 'text/html' };
    const cookie = this.cookieHeader(url);
    if (cookie) headers.Cookie = cookie;
    let body;
    if (form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      // Browsers send Origin on form POSTs; crmd may check it against CSRF.
      headers.Origin = new URL(url).origin;
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    this.storeCookies(url, res);
    const text = await res.text();
    this.log(`${method} ${url} -> ${res.status}`);
    return { status: res.status, location: res.headers.get('location'), text, url };
  }
}

function isRedirect(status) {
  return status >= 300 && status < 400;
}

function describe(page) {
  const snippet = page.text.replace(/\s+/g, ' ').slice(0, 600);
  return `HTTP ${page.status} at ${page.url}: ${snippet}`;
}

// Plays the user: opens authorizationUrl, signs in with email/password, allows the
// consent, and returns the URL the server redirected to (the client's redirect_uri with
// code/state/iss, or with error=...). `decision` may be 'deny' to test refusals.
export async function authorizeInBrowser(authorizationUrl, {
  email, password, decision = 'allow', redirectUri, log = () => {}, maxSteps = 12,
} = {}) {
  const browser = new Browser({ log });
  const redirectBase = redirectUri ? String(redirectUri) : undefined;
  let page = await browser.request(String(authorizationUrl));
  let loggedIn = false;
  let consented = false;
  for (let step = 0; step < maxSteps; step++) {
    if (isRedirect(page.status)) {
      if (!page.location) throw new Error(`redirect without Location: ${describe(page)}`);
      const next = new URL(page.location, page.url).toString();
      const leavesServer = new URL(next).origin !== new URL(String(authorizationUrl)).origin;
      if ((redirectBase && next.startsWith(redirectBase)) || leavesServer) return next;
      page = await browser.request(next);
      continue;
    }
    if (page.status !== 200) throw new Error(`unexpected page: ${describe(page)}`);
    const forms = parseForms(page.text);
    const login = forms.find((f) => f.fields.some((x) => x.type === 'password'));
    const consent = forms.find((f) => f.fields.some((x) => x.name === 'decision'));
    if (login) {
      if (loggedIn) throw new Error(`login form shown again (wrong credentials?): ${describe(page)}`);
      loggedIn = true;
      const form = [];
      for (const f of login.fields) {
        if (!f.name) continue;
        if (f.type === 'password') form.push([f.name, password]);
        else if (f.type === 'email' || /email|user|login/i.test(f.name)) form.push([f.name, email]);
        else if (f.type === 'hidden') form.push([f.name, f.value]);
        else if (f.type === 'checkbox' && f.checked) form.push([f.name, f.value]);
      }
      // A submit button with a name is sent too, as a browser would.
      const submit = login.fields.find((f) => f.type === 'submit' && f.name);
      if (submit) form.push([submit.name, submit.value]);
      const action = new URL(login.action || page.url, page.url).toString();
      page = await browser.request(action, { method: login.method === 'GET' ? 'GET' : 'POST', form });
      continue;
    }
    if (consent) {
      if (consented) throw new Error(`consent form shown again: ${describe(page)}`);
      consented = true;
      const form = [];
      const boxes = consent.fields.filter((f) => f.type === 'checkbox' && f.name);
      // Grant what the page offers: the pre-checked boxes, or all of them if none is.
      const chosen = boxes.some((b) => b.checked) ? boxes.filter((b) => b.checked) : boxes;
      for (const f of consent.fields) {
        if (!f.name) continue;
        if (f.type === 'hidden') form.push([f.name, f.value]);
      }
      for (const b of chosen) form.push([b.name, b.value]);
      const button = consent.fields.find((f) => f.name === 'decision' && f.value === decision);
      if (!button) throw new Error(`no decision=${decision} button: ${describe(page)}`);
      form.push(['decision', decision]);
      const action = new URL(consent.action || page.url, page.url).toString();
      page = await browser.request(action, { method: 'POST', form });
      continue;
    }
    throw new Error(`page has neither a login nor a consent form: ${describe(page)}`);
  }
  throw new Error('too many steps before the redirect to the client');
}

// Plays the person who approves (or denies) an action an assistant asked for: opens the
// approval URL crmd handed out, signs in on /console/login when asked to (its own
// account: the OAuth token cannot approve), and presses Approve or Deny. Returns the
// final page ({status, text, url}).
export async function approveInBrowser(approvalUrl, {
  email, password, decision = 'approve', log = () => {}, maxSteps = 8,
} = {}) {
  const browser = new Browser({ log });
  let page = await browser.request(String(approvalUrl));
  let loggedIn = false;
  for (let step = 0; step < maxSteps; step++) {
    if (isRedirect(page.status)) {
      page = await browser.request(new URL(page.location, page.url).toString());
      continue;
    }
    if (page.status !== 200) throw new Error(`unexpected page: ${describe(page)}`);
    const forms = parseForms(page.text);
    const login = forms.find((f) => f.fields.some((x) => x.type === 'password'));
    if (login) {
      if (loggedIn) throw new Error(`login form shown again (wrong credentials?): ${describe(page)}`);
      loggedIn = true;
      const form = [];
      for (const f of login.fields) {
        if (!f.name) continue;
        if (f.type === 'password') form.push([f.name, password]);
        else if (f.type === 'email') form.push([f.name, email]);
        else if (f.type === 'hidden') form.push([f.name, f.value]);
      }
      page = await browser.request(new URL(login.action || page.url, page.url).toString(),
        { method: 'POST', form });
      continue;
    }
    const choice = forms.find((f) => f.fields.some((x) => x.name === 'decision' && x.value === decision));
    if (!choice) return page;  // the result page (Approved / Denied)
    const form = choice.fields.filter((f) => f.name && f.type === 'hidden').map((f) => [f.name, f.value]);
    page = await browser.request(new URL(choice.action || page.url, page.url).toString(),
      { method: 'POST', form });
  }
  throw new Error('too many steps on the approval page');
}
