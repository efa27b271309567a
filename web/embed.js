/*
 * Chat widget of the Agent Management Service. Embed with:
 *   <script src="{base_url}/embed.js" data-agent="wgt_..." async></script>
 * Plain JavaScript, no build step. Renders into a Shadow DOM so page styles and ours never meet,
 * and puts every piece of data on the page through textContent, never as markup.
 */
(() => {
  'use strict';

  const script = document.currentScript
    || [...document.querySelectorAll('script[data-agent]')].find((s) => !s.dataset.agentMounted);
  if (!script || script.dataset.agentMounted) return;
  script.dataset.agentMounted = '1';
  const key = script.dataset.agent;
  const base = new URL('.', script.src).href.replace(/\/$/, '');
  const root = `${base}/api/v1/public/widgets/${encodeURIComponent(key)}`;
  const warn = (msg) => console.warn(`[agent widget ${key}] ${msg}`); // eslint-disable-line no-console
  const pageLang = (/^[a-z]{2}(?![a-z])/i.exec(document.documentElement.lang || '') || [''])[0].toLowerCase();

  const STRINGS = {
    en: {
      open: 'Open chat', close: 'Close chat', end: 'End conversation', endShort: 'End', send: 'Send', placeholder: 'Write a message\u2026',
      typing: 'The agent is typing', paused: 'This assistant is not taking conversations right now. Please come back later.',
      failed: 'Your message could not be sent. Please try again.', ended: 'The conversation has ended.',
      suggestions: 'Suggested questions', messages: 'Messages', advisor: 'Advisor',
      helpful: 'Helpful', notHelpful: 'Not helpful', rate: 'How was this conversation?', stars: 'out of 5',
      comment: 'Anything to add? (optional)', sendRating: 'Send rating', thanks: 'Thank you for your feedback.',
    },
    fr: {
      open: 'Ouvrir la discussion', close: 'Fermer la discussion', end: 'Terminer la conversation', endShort: 'Terminer', send: 'Envoyer',
      placeholder: '\u00c9crivez un message\u2026', typing: 'L\u2019agent \u00e9crit', failed: 'Votre message n\u2019a pas pu \u00eatre envoy\u00e9. R\u00e9essayez.',
      paused: 'Cet assistant ne prend pas de conversations pour le moment. Revenez plus tard.',
      ended: 'La conversation est termin\u00e9e.', suggestions: 'Questions sugg\u00e9r\u00e9es', messages: 'Messages', advisor: 'Conseiller',
      helpful: 'Utile', notHelpful: 'Pas utile', rate: 'Comment s\u2019est pass\u00e9e cette conversation\u00a0?', stars: 'sur 5',
      comment: 'Un commentaire\u00a0? (facultatif)', sendRating: 'Envoyer la note', thanks: 'Merci pour votre avis.',
    },
  };
  const t = STRINGS[pageLang] || STRINGS.en;

  // Storage can throw (blocked cookies, sandboxed frames): the widget then works without memory.
  const store = (area) => ({
    get(k) { try { return JSON.parse(window[area].getItem(k)); } catch { return null; } },
    set(k, v) { try { window[area].setItem(k, JSON.stringify(v)); } catch { /* no memory */ } },
    del(k) { try { window[area].removeItem(k); } catch { /* no memory */ } },
  });
  const local = store('localStorage');
  const session = store('sessionStorage');
  const VISITOR_KEY = `ams:visitor:${key}`;
  const SESSION_KEY = `ams:conversation:${key}`;

  async function api(method, path, body, token) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers['X-Visitor-Token'] = token;
    const res = await fetch(root + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit',
    });
    const data = await res.json().catch(() => null);
    if (!res.ok) throw Object.assign(new Error((data && (data.detail || data.title)) || `HTTP ${res.status}`), { status: res.status, code: data && data.code });
    return data;
  }

  /**
   * Sends a message asking for the reply as it is written (Server-Sent Events): `onText` gets each piece of it, and the
   * answer is the final event, `{messages, source, tool_calls}`. A service that answers JSON is read as before.
   */
  async function streamed(path, body, token, onText) {
    const res = await fetch(root + path, {
      method: 'POST', credentials: 'omit', body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'X-Visitor-Token': token },
    });
    if (!res.ok || !(res.headers.get('Content-Type') || '').startsWith('text/event-stream') || !res.body) {
      const data = await res.json().catch(() => null);
      if (!res.ok) throw Object.assign(new Error((data && (data.detail || data.title)) || `HTTP ${res.status}`), { status: res.status, code: data && data.code });
      return data;
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let final = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = (/^event: (.*)$/m.exec(block) || [])[1];
        const data = (/^data: (.*)$/m.exec(block) || [])[1];
        if (!event || data === undefined) continue;
        const payload = JSON.parse(data);
        if (event === 'delta') onText(payload.text);
        else if (event === 'done') final = payload;
        else if (event === 'error') throw Object.assign(new Error(payload.detail || 'the reply failed'), { status: 500, code: payload.code });
      }
    }
    if (!final) throw Object.assign(new Error('the reply stream ended early'), { status: 500 });
    return final;
  }

  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === false || value == null) continue;
      if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value === true ? '' : value);
    }
    node.append(...children.filter(Boolean));
    return node;
  };
  const svg = (paths, cls = 'ico') => {
    const node = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    node.setAttribute('class', cls);
    node.setAttribute('viewBox', '0 0 24 24');
    node.setAttribute('aria-hidden', 'true');
    for (const d of paths) {
      const p = document.createElementNS('http://www.w3.org/2000/svg', 'path');
      p.setAttribute('d', d);
      node.append(p);
    }
    return node;
  };
  const CHAT_ICON = ['M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z'];
  const CLOSE_ICON = ['M6 6l12 12M18 6L6 18'];
  const SEND_ICON = ['M3 11l18-8-8 18-2-8z'];

  /** Black or white text, whichever reads better on the primary color. */
  function inkOn(hex) {
    let h = String(hex || '').replace('#', '');
    if (h.length === 3) h = [...h].map((c) => c + c).join('');
    const [r, g, b] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.4 ? '#111827' : '#ffffff';
  }

  const STYLE = `
:host{all:initial;display:block;--scheme:light;--bg:#fff;--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--bubble:#f3f4f6}
:host([data-mode=dark]){--scheme:dark;--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--line:#374151;--bubble:#1f2937}
@media (prefers-color-scheme:dark){:host([data-mode=auto]){--scheme:dark;--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--line:#374151;--bubble:#1f2937}}
.root{all:initial;display:block;height:100%;color-scheme:var(--scheme);color:var(--fg);
 font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
*{box-sizing:border-box}
[hidden]{display:none!important}
button{font:inherit;cursor:pointer}
.launcher{position:fixed;bottom:20px;z-index:2147483000;display:flex;align-items:center;gap:8px;height:56px;min-width:56px;
 padding:0 16px;border:0;border-radius:calc(var(--radius) * 2);background:var(--primary);color:var(--ink);
 box-shadow:0 6px 20px rgba(0,0,0,.2);justify-content:center}
svg{width:18px;height:18px;fill:none;stroke:currentColor;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
.launcher svg{width:26px;height:26px}
.launcher img{width:28px;height:28px;object-fit:contain;border-radius:4px}
.launcher .x,.launcher.open .ico,.launcher.open span{display:none}.launcher.open .x{display:block}
.launcher:focus-visible,button:focus-visible,textarea:focus-visible{outline:3px solid var(--primary);outline-offset:2px}
.right{right:20px}.left{left:20px}
.panel{display:flex;flex-direction:column;background:var(--bg);color:var(--fg);border:1px solid var(--line);
 border-radius:var(--radius);overflow:hidden}
.floating{position:fixed;bottom:88px;z-index:2147483000;width:370px;height:min(580px,calc(100vh - 108px));
 box-shadow:0 12px 40px rgba(0,0,0,.25)}
.inline{width:100%;height:100%;min-height:420px}
.fullscreen{position:fixed;inset:0;z-index:2147483000;border:0;border-radius:0}
@media (max-width:480px){.floating{inset:0;width:auto;height:auto;border-radius:0}}
header{display:flex;align-items:center;gap:10px;padding:14px 16px;background:var(--primary);color:var(--ink)}
header img{width:36px;height:36px;border-radius:calc(var(--radius) / 2);object-fit:cover;background:#fff}
.titles{flex:1;min-width:0}
h2{margin:0;font-size:16px;font-weight:600}
.sub{margin:2px 0 0;font-size:13px;opacity:.85}
.icon{width:32px;height:32px;border:0;border-radius:8px;background:transparent;color:inherit;display:grid;place-items:center}
.icon:hover,.end:hover{background:rgba(127,127,127,.2)}
.thumbs{align-self:flex-start;display:flex;gap:4px;margin-top:-4px}
.thumbs button,.star{border:0;background:transparent;cursor:pointer;font-size:14px;opacity:.55;padding:2px}
.thumbs button[aria-pressed=true],.star[aria-pressed=true]{opacity:1}
.star[aria-pressed=true]{color:#f5a623}
.survey{display:flex;flex-direction:column;gap:6px;align-self:stretch}
.survey textarea{font:inherit;resize:vertical}
.end{border:1px solid currentColor;border-radius:999px;background:transparent;color:inherit;padding:2px 10px;font-size:12px}
.log{flex:1;overflow-y:auto;padding:16px;display:flex;flex-direction:column;gap:8px}
.msg{max-width:85%;padding:8px 12px;border-radius:var(--radius);white-space:pre-wrap;overflow-wrap:anywhere}
.msg.agent,.msg.human_agent{align-self:flex-start;background:var(--bubble)}
.msg.visitor{align-self:flex-end;background:var(--primary);color:var(--ink)}
.msg.system,.note{align-self:center;color:var(--muted);font-size:12px;text-align:center}
.who{display:block;font-size:11px;color:var(--muted);margin-bottom:2px}
.typing{align-self:flex-start;display:flex;gap:4px;padding:12px;background:var(--bubble);border-radius:var(--radius)}
.typing i{width:6px;height:6px;border-radius:50%;background:var(--muted);animation:b 1s infinite}
.typing i:nth-child(2){animation-delay:.15s}.typing i:nth-child(3){animation-delay:.3s}
@keyframes b{0%,60%,100%{opacity:.3}30%{opacity:1}}
.prompts{display:flex;flex-wrap:wrap;gap:6px;padding:0 16px 10px}
.prompts button{border:1px solid var(--primary);background:transparent;color:var(--fg);padding:6px 10px;border-radius:var(--radius)}
.notice{margin:0 16px 10px;padding:8px 12px;border-radius:var(--radius);background:var(--bubble);color:var(--fg);font-size:13px}
form{display:flex;gap:8px;padding:10px 12px;border-top:1px solid var(--line)}
textarea{flex:1;resize:none;font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--line);
 border-radius:var(--radius);padding:8px 10px;max-height:120px}
form button{border:0;background:var(--primary);color:var(--ink);border-radius:var(--radius);width:40px;display:grid;place-items:center}
:disabled{opacity:.5;cursor:not-allowed}
@media (prefers-reduced-motion:reduce){.typing i{animation:none}}`;

  function copyFor(config) {
    const loc = (config.localized_copy || {})[pageLang] || {};
    const pick = (k) => (loc[k] != null && loc[k] !== '' ? loc[k] : config[k]);
    const prompts = loc.suggested_prompts && loc.suggested_prompts.length ? loc.suggested_prompts : config.suggested_prompts;
    return { title: pick('intro_title') || config.name, subtitle: pick('intro_subtitle'), prompts: prompts || [] };
  }

  function launcherIcon(config) {
    const src = config.launcher_icon_kind === 'logo' ? config.logo_url
      : config.launcher_icon_kind === 'custom' ? config.launcher_icon_url : null;
    if (!src) return svg(CHAT_ICON);
    const img = el('img', { src, alt: '', class: 'ico' });
    img.addEventListener('error', () => img.replaceWith(svg(CHAT_ICON)), { once: true });
    return img;
  }

  function mount(config) {
    const mode = config.display_mode || 'floating';
    const theme = config.theme || {};
    const copy = copyFor(config);
    const side = config.position === 'bottom_left' ? 'left' : 'right';

    const host = el('ams-chat-widget', { 'data-widget': key, 'data-mode': theme.mode || 'auto' });
    host.style.setProperty('--primary', theme.primary || '#2563eb');
    host.style.setProperty('--ink', inkOn(theme.primary || '#2563eb'));
    host.style.setProperty('--radius', `${Number.isFinite(theme.radius) ? theme.radius : 12}px`);
    // Open, not closed: styles are sealed either way, and closed would only hide the DOM from tests and tools.
    const shadow = host.attachShadow({ mode: 'open' });
    // The page's rules still reach the host element and what it passes on: .root starts afresh.
    const shell = el('div', { class: 'root' });
    shadow.append(el('style', { text: STYLE }), shell);

    const state = {
      paused: config.status === 'paused' || config.accepting_conversations === false,
      conv: session.get(SESSION_KEY), busy: false, open: false, poll: 0, seen: new Set(), pending: [],
    };

    const titleId = `ams-title-${key}`;
    const log = el('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': t.messages });
    const typing = el('div', { class: 'typing', role: 'status', 'aria-label': t.typing, hidden: true }, el('i'), el('i'), el('i'));
    const notice = el('p', { class: 'notice', role: 'alert', hidden: true });
    const input = el('textarea', { rows: 1, placeholder: t.placeholder, 'aria-label': t.placeholder, maxlength: 4000 });
    const sendBtn = el('button', { type: 'submit', 'aria-label': t.send }, svg(SEND_ICON));
    const prompts = el('div', { class: 'prompts', role: 'group', 'aria-label': t.suggestions },
      ...copy.prompts.map((p) => el('button', { type: 'button', text: p, onclick: () => send(p) })));
    const endBtn = el('button', { class: 'end', type: 'button', text: t.endShort, 'aria-label': t.end, hidden: true, onclick: endConversation });
    const closeBtn = mode === 'floating'
      && el('button', { class: 'icon', type: 'button', 'aria-label': t.close, title: t.close, onclick: () => setOpen(false) }, svg(CLOSE_ICON));
    const form = el('form', { onsubmit: (e) => { e.preventDefault(); send(input.value); } }, input, sendBtn);
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(input.value); }
    });

    const panel = el('section', {
      class: `panel ${mode} ${side}`, role: mode === 'inline' ? 'region' : 'dialog', 'aria-labelledby': titleId,
      id: 'panel', hidden: mode === 'floating',
    },
    el('header', {},
      config.logo_url && el('img', { src: config.logo_url, alt: '' }),
      el('div', { class: 'titles' }, el('h2', { id: titleId, text: copy.title }), copy.subtitle && el('p', { class: 'sub', text: copy.subtitle })),
      endBtn, closeBtn),
    log, el('div', {}, notice), prompts, form);
    log.append(typing);

    let launcher = null;
    if (mode === 'floating') {
      const label = config.show_label !== false && config.button_label;
      launcher = el('button', {
        class: `launcher ${side}`, type: 'button', 'aria-label': config.button_label || t.open,
        'aria-expanded': 'false', 'aria-controls': 'panel', onclick: () => setOpen(!state.open),
      }, launcherIcon(config), svg(CLOSE_ICON, 'x'), label && el('span', { text: label }));
      shell.append(launcher);
    }
    shell.append(panel);
    shadow.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && mode === 'floating' && state.open) { e.stopPropagation(); setOpen(false); }
    });

    function showNotice(text) { notice.textContent = text || ''; notice.hidden = !text; }

    function setBusy(busy) {
      state.busy = busy;
      typing.hidden = !busy;
      sendBtn.disabled = busy || state.paused;
      for (const b of prompts.querySelectorAll('button')) b.disabled = busy || state.paused;
      if (busy) log.append(typing);
      log.scrollTop = log.scrollHeight;
    }

    function render(m) {
      const node = el('div', { class: `msg ${m.role}` },
        m.role === 'human_agent' && el('span', { class: 'who', text: t.advisor }), document.createTextNode(m.text || ''));
      log.insertBefore(node, typing);
      if (m.id && (m.role === 'agent' || m.role === 'human_agent') && state.conv) log.insertBefore(thumbs(m.id, state.conv), typing);
      log.scrollTop = log.scrollHeight;
    }

    /** Thumbs up and down under a reply (issue 45): a vote replaces the earlier one. */
    function thumbs(messageId, conv) {
      const vote = (value) => async () => {
        for (const b of box.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.value === value));
        try {
          await api('POST', `/conversations/${encodeURIComponent(conv.id)}/messages/${encodeURIComponent(messageId)}/feedback`, { thumbs: value }, conv.token);
        } catch (err) { warn(`feedback failed: ${err.message}`); }
      };
      const box = el('div', { class: 'thumbs', role: 'group', 'aria-label': t.helpful },
        el('button', { type: 'button', 'data-value': 'up', 'aria-label': t.helpful, 'aria-pressed': 'false', text: '\u{1F44D}', onclick: vote('up') }),
        el('button', { type: 'button', 'data-value': 'down', 'aria-label': t.notHelpful, 'aria-pressed': 'false', text: '\u{1F44E}', onclick: vote('down') }));
      return box;
    }

    /** The end-of-chat survey, where the agent asks for one (`satisfaction_survey`): 1 to 5 and an optional comment. */
    function survey(conv) {
      let rating = 0;
      const stars = [1, 2, 3, 4, 5].map((n) => el('button', {
        type: 'button', class: 'star', 'aria-label': `${n} ${t.stars}`, 'aria-pressed': 'false', text: '\u2605',
        onclick: () => { rating = n; for (const [i, b] of stars.entries()) b.setAttribute('aria-pressed', String(i < n)); submit.disabled = false; },
      }));
      const comment = el('textarea', { rows: '2', maxlength: '2000', 'aria-label': t.comment, placeholder: t.comment });
      const submit = el('button', { type: 'submit', text: t.sendRating, disabled: true });
      const form = el('form', {
        class: 'survey', 'aria-label': t.rate,
        onsubmit: async (e) => {
          e.preventDefault();
          submit.disabled = true;
          try {
            await api('POST', `/conversations/${encodeURIComponent(conv.id)}/rating`, { rating, comment: comment.value.trim() || null }, conv.token);
            form.replaceChildren(el('p', { text: t.thanks }));
          } catch (err) { warn(`rating failed: ${err.message}`); submit.disabled = false; }
        },
      }, el('p', { text: t.rate }), el('div', { role: 'group', 'aria-label': t.rate }, ...stars), comment, submit);
      log.insertBefore(form, typing);
      log.scrollTop = log.scrollHeight;
    }

    /** Keeps the transcript for a reload; the visitor's own lines have no id until the service echoes them. */
    function remember(m) {
      if (!state.conv) return;
      state.conv.log = [...(state.conv.log || []), { id: m.id, role: m.role, text: m.text }].slice(-100);
      if (m.id) state.conv.last = m.id;
      else state.pending.push(m.text);
    }

    function say(text) {
      render({ role: 'visitor', text });
      remember({ role: 'visitor', text });
      session.set(SESSION_KEY, state.conv);
    }

    /** Adds messages from the service once each; our own visitor lines get their id when they come back. */
    function take(messages) {
      for (const m of messages || []) {
        if (!m || !m.id || state.seen.has(m.id)) continue;
        state.seen.add(m.id);
        const mine = m.role === 'visitor' ? state.pending.indexOf(m.text) : -1;
        if (mine >= 0) {
          state.pending.splice(mine, 1);
          if (state.conv) state.conv.last = m.id;
        } else {
          render(m);
          remember(m);
        }
      }
      if (state.conv) session.set(SESSION_KEY, state.conv);
    }

    function forget(text) {
      session.del(SESSION_KEY);
      state.conv = null;
      state.pending = [];
      endBtn.hidden = true;
      stopPolling();
      if (text) log.insertBefore(el('p', { class: 'note', text }), typing);
    }

    async function start() {
      const body = { page_url: location.href.length <= 2048 ? location.href : (location.origin + location.pathname).slice(0, 2048) };
      if (pageLang) body.language = pageLang;
      const visitor = local.get(VISITOR_KEY);
      if (visitor) body.visitor_id = visitor;
      let res;
      try {
        res = await api('POST', '/conversations', body);
      } catch (err) {
        if (err.status !== 400 || !visitor) throw err;
        delete body.visitor_id; // a visitor id the service no longer accepts: start afresh
        res = await api('POST', '/conversations', body);
      }
      if (res.visitor_id) local.set(VISITOR_KEY, res.visitor_id);
      state.conv = { id: res.conversation_id, token: res.visitor_token, log: [] };
      endBtn.hidden = false;
      take(res.messages);
      startPolling();
    }

    function failed(err) {
      if (err.code === 'agent_paused') {
        disable();
      } else if (err.status === 401 || err.status === 404 || err.code === 'invalid_state') {
        forget(t.ended);
      } else {
        warn(`request failed: ${err.message}`);
        showNotice(t.failed);
      }
    }

    async function ensureConversation() {
      if (state.conv || state.paused || state.busy) return;
      setBusy(true);
      try { await start(); } catch (err) { failed(err); } finally { setBusy(false); }
    }

    async function send(raw) {
      const text = String(raw || '').trim();
      if (!text || state.busy || state.paused) return;
      input.value = '';
      showNotice('');
      prompts.hidden = true;
      setBusy(true);
      try {
        if (!state.conv) await start();
        say(text);
        // The reply appears as it is written; the stored messages replace it at the end.
        let live = null;
        try {
          const res = await streamed(`/conversations/${encodeURIComponent(state.conv.id)}/messages`, { text }, state.conv.token, (piece) => {
            if (!live) {
              live = el('div', { class: 'msg agent streaming', 'aria-busy': 'true' });
              log.insertBefore(live, typing);
              typing.hidden = true;
            }
            live.textContent += piece;
            log.scrollTop = log.scrollHeight;
          });
          if (live) live.remove();
          take(res.messages);
        } catch (err) {
          if (live) live.remove();
          throw err;
        }
      } catch (err) {
        if (!input.value) input.value = text;
        failed(err);
      } finally {
        setBusy(false);
        if (state.open || mode !== 'floating') input.focus();
      }
    }

    async function poll() {
      if (!state.conv || state.busy || document.hidden) return;
      const conv = state.conv;
      try {
        const q = conv.last ? `?after=${encodeURIComponent(conv.last)}` : '';
        const res = await api('GET', `/conversations/${encodeURIComponent(conv.id)}/messages${q}`, undefined, conv.token);
        if (state.conv === conv && !state.busy) take(res.messages);
      } catch (err) {
        if (err.status === 401 || err.status === 403 || err.status === 404) forget(t.ended);
      }
    }
    function startPolling() {
      if (!state.poll && state.conv && (state.open || mode !== 'floating')) state.poll = setInterval(poll, 4000);
    }
    function stopPolling() { clearInterval(state.poll); state.poll = 0; }

    async function endConversation() {
      const conv = state.conv;
      if (!conv) return;
      forget(t.ended);
      prompts.hidden = !copy.prompts.length;
      try { await api('POST', `/conversations/${encodeURIComponent(conv.id)}/end`, undefined, conv.token); } catch (err) { warn(`end failed: ${err.message}`); }
      if (config.satisfaction_survey) survey(conv);
      else input.focus();
    }

    function setOpen(open) {
      state.open = open;
      panel.hidden = !open;
      launcher.setAttribute('aria-expanded', String(open));
      launcher.classList.toggle('open', open);
      launcher.setAttribute('aria-label', open ? t.close : config.button_label || t.open);
      session.set(`${SESSION_KEY}:open`, open);
      if (open) {
        (state.paused ? closeBtn : input).focus();
        ensureConversation();
        startPolling();
        poll();
      } else {
        stopPolling();
        launcher.focus();
      }
    }

    function disable() {
      state.paused = true;
      showNotice(t.paused);
      input.disabled = true;
      sendBtn.disabled = true;
      prompts.hidden = true;
    }

    prompts.hidden = !copy.prompts.length;
    if (state.paused) disable();
    if (state.conv && state.conv.id) {
      // Resume this tab's conversation: show what we had, then ask for anything newer.
      const saved = state.conv.log || [];
      state.conv.log = [];
      for (const m of saved) {
        if (m.id) state.seen.add(m.id);
        render(m);
        remember(m);
      }
      prompts.hidden = true;
      endBtn.hidden = false;
      poll();
    } else {
      state.conv = null;
    }

    const place = () => {
      if (mode === 'inline') {
        const box = document.querySelector(`[data-agent-container="${window.CSS.escape(key)}"]`)
          || document.querySelector('[data-agent-container]');
        if (box) box.append(host);
        else if (script.parentNode && script.parentNode !== document.head) script.after(host);
        else document.body.append(host);
      } else {
        document.body.append(host);
      }
      if (mode === 'floating' && session.get(`${SESSION_KEY}:open`)) setOpen(true);
      else startPolling();
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', place, { once: true });
    else place();
  }

  api('GET', '/config').then(mount, (err) => {
    if (err.code === 'origin_not_allowed') warn(`this page's origin (${location.origin}) is not in the agent's domains: the widget stays hidden`);
    else warn(`cannot load the widget configuration: ${err.message}`);
  });
})();
