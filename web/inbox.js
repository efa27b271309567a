/*
 * The live inbox operator page (served at /inbox): plain JavaScript, no build step, like embed.js.
 * Paste a user token (ut_...); the list of conversations in progress follows the live stream
 * (Server-Sent Events read with fetch, so the token travels in the Authorization header); open a
 * conversation to take it over, reply, hand it back and tag it. Every text from the API is shown
 * with textContent, never as HTML. An `alert` event (agents with live_chat_alerts, issue 43) counts on
 * the header badge and marks its row until the conversation is opened, plays a short tone (Web Audio)
 * and, when the browser allows it, shows a system notification.
 *
 * The operators' console (issue 45): the member's availability, the queue of conversations waiting for
 * a person, a search and a "mine only" filter, assign to me, release and close, `notification` events (an
 * assignment, a conversation waiting) told as the member's preferences say, and canned responses:
 * typing `/code` in the reply suggests them, and Tab expands the code into its text.
 */
(function () {
  'use strict';
  var REST = '/api/v1/rest';
  var $ = function (id) { return document.getElementById(id); };
  var state = { token: sessionStorage.getItem('ams_inbox_token') || '', open: null, lastEventId: '', conversations: [], queue: [], me: null, refresh: 0, seen: {}, alerts: {}, audio: null, suggest: 0 };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'class') node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  function api(method, path, body) {
    var headers = { authorization: 'Bearer ' + state.token };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(REST + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (res) {
        return res.text().then(function (text) {
          var json = text ? JSON.parse(text) : null;
          if (!res.ok) throw new Error((json && (json.detail || json.title)) || ('HTTP ' + res.status));
          return json;
        });
      });
  }

  function showError(err) {
    $('error').hidden = !err;
    $('error').textContent = err ? String(err.message || err) : '';
  }

  function setStatus(text) { $('status').textContent = text; }

  // ---- the list

  function loadList() {
    return Promise.all([api('GET', '/conversations/live'), api('GET', '/conversations/queue?assigned=all')]).then(function (both) {
      state.conversations = both[0].data;
      state.queue = both[1].data;
      renderList();
      renderQueue();
      if (state.open) renderDetailHeader();
    });
  }

  /** The member this token acts for: their name and availability in the header. */
  function loadMe() {
    return api('GET', '/members/me').then(function (me) {
      state.me = me;
      $('me').hidden = false;
      $('me').textContent = me.name + ' (' + me.role + ')';
      $('availability').hidden = false;
      $('availability-label').hidden = false;
      $('availability').value = me.availability;
    });
  }

  function matches(c) {
    var q = $('search').value.trim().toLowerCase();
    var mine = $('mine').checked;
    if (mine && (!state.me || (c.assigned_to !== state.me.email && c.held_by !== state.me.email))) return false;
    if (!q) return true;
    return [c.id, c.surface, c.assigned_to || '', c.last_message ? c.last_message.text : ''].join(' ').toLowerCase().indexOf(q) >= 0;
  }

  function renderQueue() {
    var list = $('queue');
    list.textContent = '';
    var waiting = state.queue.filter(function (q) { return !q.assigned_to || !$('mine').checked || (state.me && q.assigned_to === state.me.email); });
    $('queue-count').textContent = String(state.queue.filter(function (q) { return !q.assigned_to; }).length);
    waiting.forEach(function (q) {
      var item = el('li', { 'data-id': q.id, class: state.open === q.id ? 'open' : '' }, [
        el('div', { class: 'top' }, [el('span', { text: q.surface + ' · ' + q.id.slice(-6) }),
          el('span', { class: 'badge needs', text: q.assigned_to ? 'assigned' : 'waiting' })]),
        el('div', { class: 'last', text: q.last_message || '' }),
        q.assigned_to ? el('div', { class: 'last', text: 'Assigned to ' + q.assigned_to }) : null,
      ]);
      item.addEventListener('click', function () { openConversation(q.id); });
      list.appendChild(item);
    });
  }

  /** Many events come in bursts: one reload of the list for each burst. */
  function scheduleRefresh() {
    clearTimeout(state.refresh);
    state.refresh = setTimeout(function () { loadList().catch(showError); }, 150);
  }

  function renderList() {
    var list = $('list');
    list.textContent = '';
    $('empty').hidden = state.conversations.length > 0;
    state.conversations.filter(matches).forEach(function (c) {
      var top = el('div', { class: 'top' }, [
        el('span', { class: 'dot ' + c.presence, title: c.presence }),
        el('span', { text: c.surface + ' · ' + c.id.slice(-6) }),
        c.mode === 'human' ? el('span', { class: 'badge human', text: 'human' }) : null,
        c.needs_human ? el('span', { class: 'badge needs', text: 'needs human' }) : null,
        c.unread_count ? el('span', { class: 'badge unread', text: String(c.unread_count) }) : null,
        state.alerts[c.id] ? el('span', { class: 'badge alert', text: 'alert' }) : null,
      ]);
      var item = el('li', { 'data-id': c.id, class: state.open === c.id ? 'open' : '' }, [
        top, el('div', { class: 'last', text: c.last_message ? c.last_message.text : '' }),
        c.assigned_to ? el('div', { class: 'last', text: 'Assigned to ' + c.assigned_to }) : null,
      ]);
      item.addEventListener('click', function () { openConversation(c.id); });
      list.appendChild(item);
    });
  }

  // ---- one conversation

  function current() {
    return state.conversations.filter(function (c) { return c.id === state.open; })[0] || null;
  }

  /** Every control acting on a conversation is disabled until one is selected (none acts on `null`). */
  function renderDetailHeader() {
    var c = current();
    var mode = !state.open ? 'none' : c && c.status === 'active' ? c.mode : 'ended';
    $('mode').hidden = mode === 'none';
    $('pick').hidden = mode !== 'none';
    $('mode').textContent = mode === 'human' ? 'You are answering' : mode === 'agent' ? 'Agent answering' : 'Ended';
    $('mode').className = 'badge ' + mode;
    $('take').disabled = mode !== 'agent';
    $('back').disabled = mode !== 'human';
    $('text').disabled = mode !== 'human';
    $('reply').querySelector('button').disabled = mode !== 'human';
    $('tag').disabled = mode === 'none';
    $('tagger').querySelector('button').disabled = mode === 'none';
    var live = c && (mode === 'agent' || mode === 'human');
    $('assign-me').disabled = !live || !state.me || c.assigned_to === state.me.email;
    $('release').disabled = !live || !c.assigned_to;
    $('close').disabled = !live;
    $('assignee').textContent = c && c.assigned_to ? 'Assigned to ' + c.assigned_to : '';
  }

  function addMessage(m) {
    if (state.seen[m.id]) return;
    state.seen[m.id] = true;
    var label = m.role === 'human_agent' ? 'You' : m.role === 'agent' ? 'Agent' : null;
    $('log').appendChild(el('div', { class: 'msg ' + m.role }, [label ? el('span', { class: 'who', text: label }) : null, document.createTextNode(m.text)]));
    $('log').scrollTop = $('log').scrollHeight;
  }

  function renderTags(annotations) {
    var box = $('tags');
    box.textContent = '';
    annotations.tags.forEach(function (t) { box.appendChild(el('span', { class: 'tag', text: t })); });
  }

  /** What is known of the conversation: its extracted data, contact and labels, and the team's notes. */
  function renderData(conversation, annotations) {
    var box = $('data');
    box.textContent = '';
    var rows = Object.keys(conversation.extracted_data || {}).map(function (k) { return [k, String(conversation.extracted_data[k])]; });
    if (conversation.contact_id) rows.push(['contact', conversation.contact_id]);
    if (conversation.labels && conversation.labels.length) rows.push(['labels', conversation.labels.join(', ')]);
    rows.forEach(function (r) { box.appendChild(el('dt', { text: r[0] })); box.appendChild(el('dd', { text: r[1] })); });
    var notes = $('notes');
    notes.textContent = '';
    (annotations.notes || []).forEach(function (n) { notes.appendChild(el('li', { class: 'note', text: n.author + ': ' + n.text })); });
  }

  // ---- alerts: a badge, a tone, a notification

  function renderAlerts() {
    var count = Object.keys(state.alerts).length;
    $('alerts').hidden = count === 0;
    $('alerts').textContent = count === 1 ? '1 alert' : count + ' alerts';
    document.title = (count ? '(' + count + ') ' : '') + 'Live inbox';
  }

  /** The page's audio, made during the Connect click: browsers let a page sound only after a gesture. */
  function prepareAlerts() {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    if (!state.audio && Ctx) { try { state.audio = new Ctx(); } catch (e) { state.audio = null; } }
    if (window.Notification && Notification.permission === 'default') {
      try { Notification.requestPermission(); } catch (e) { /* an older browser: no notifications */ }
    }
  }

  /** Two short tones (about a third of a second). */
  function chime() {
    var ctx = state.audio;
    if (!ctx) return;
    if (ctx.state === 'suspended' && ctx.resume) ctx.resume();
    [880, 1175].forEach(function (hz, i) {
      var osc = ctx.createOscillator();
      var gain = ctx.createGain();
      var at = ctx.currentTime + i * 0.16;
      osc.frequency.value = hz;
      gain.gain.setValueAtTime(0.12, at);
      gain.gain.exponentialRampToValueAtTime(0.001, at + 0.15);
      osc.connect(gain);
      gain.connect(ctx.destination);
      osc.start(at);
      osc.stop(at + 0.15);
    });
  }

  function notify(data) {
    if (!window.Notification || Notification.permission !== 'granted') return;
    var title = data.kind ? data.text : data.reason === 'handoff_requested' ? 'A visitor asks for a person' : 'A visitor is waiting for a reply';
    try {
      var n = new Notification(title, { body: data.text || '', tag: 'ams-' + data.conversation_id });
      n.onclick = function () { window.focus(); openConversation(data.conversation_id); n.close(); };
    } catch (e) { /* some browsers allow notifications only from a service worker */ }
  }

  /** The conversation on screen, in a visible tab, alerts nobody: the member is reading it. */
  function handleAlert(data) {
    if (data.conversation_id === state.open && document.visibilityState === 'visible') return;
    state.alerts[data.conversation_id] = true;
    renderAlerts();
    renderList();
    chime();
    notify(data);
  }

  /** A notice for this member (an assignment, a conversation waiting): the badge, and a tone and a notification as their preferences say. */
  function handleNotice(data) {
    if (data.conversation_id === state.open && document.visibilityState === 'visible') return;
    state.alerts[data.conversation_id] = true;
    renderAlerts();
    renderList();
    if (data.sound) chime();
    if (data.browser) notify(data);
  }

  function openConversation(id) {
    state.open = id;
    state.seen = {};
    if (state.alerts[id]) { delete state.alerts[id]; renderAlerts(); }
    $('log').textContent = '';
    $('data').textContent = '';
    $('notes').textContent = '';
    $('title').textContent = 'Conversation ' + id.slice(-6);
    renderList();
    renderQueue();
    renderDetailHeader();
    showError(null);
    return Promise.all([api('GET', '/conversations/' + id), api('GET', '/conversations/' + id + '/annotations')])
      .then(function (both) {
        both[0].messages.forEach(addMessage);
        renderTags(both[1]);
        renderData(both[0], both[1]);
        return api('POST', '/conversations/' + id + '/advisor', { action: 'mark_read' });
      })
      .then(function () { scheduleRefresh(); })
      .catch(showError);
  }

  function act(body) {
    if (!state.open) return Promise.resolve();
    showError(null);
    return api('POST', '/conversations/' + state.open + '/advisor', body).then(function (row) {
      state.conversations = state.conversations.map(function (c) { return c.id === row.id ? row : c; });
      renderList();
      renderDetailHeader();
    }).catch(showError);
  }

  // ---- the live stream: SSE over fetch, reconnecting with Last-Event-ID

  function handleEvent(type, data) {
    if (type === 'alert') { handleAlert(data); return; }
    if (type === 'notification') { handleNotice(data); scheduleRefresh(); return; }
    if (type === 'ended' && state.alerts[data.conversation_id]) { delete state.alerts[data.conversation_id]; renderAlerts(); }
    if (data.conversation_id === state.open && type === 'message') {
      addMessage(data.message);
      // Seen as it arrives: the open conversation stays read.
      if (data.message.role === 'visitor') {
        api('POST', '/conversations/' + state.open + '/advisor', { action: 'mark_read' }).then(scheduleRefresh, showError);
        return;
      }
    }
    scheduleRefresh();
  }

  function stream() {
    var headers = { authorization: 'Bearer ' + state.token };
    if (state.lastEventId) headers['last-event-id'] = state.lastEventId;
    var token = state.token;
    return fetch(REST + '/conversations/live/stream', { headers: headers }).then(function (res) {
      if (!res.ok) throw new Error('live stream: HTTP ' + res.status);
      setStatus('Live');
      showError(null); // connected: what went wrong before no longer applies
      var reader = res.body.getReader();
      var decoder = new TextDecoder();
      var buffer = '';
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) return;
          buffer += decoder.decode(chunk.value, { stream: true });
          var blocks = buffer.split('\n\n');
          buffer = blocks.pop();
          blocks.forEach(function (block) {
            var fields = {};
            block.split('\n').forEach(function (line) {
              if (!line || line.charAt(0) === ':') return;
              var at = line.indexOf(':');
              fields[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, '');
            });
            if (fields.id) state.lastEventId = fields.id;
            if (fields.event && fields.data) handleEvent(fields.event, JSON.parse(fields.data));
          });
          return pump();
        });
      }
      return pump();
    }).then(function () {
      if (token === state.token) { setStatus('Reconnecting…'); setTimeout(stream, 500); }
    }, function (err) {
      setStatus('Disconnected');
      showError(err);
      if (token === state.token) setTimeout(stream, 3000);
    });
  }

  // ---- wiring

  $('connect').addEventListener('submit', function (e) {
    e.preventDefault();
    state.token = $('token').value.trim();
    state.lastEventId = '';
    state.alerts = {};
    renderAlerts();
    prepareAlerts();
    sessionStorage.setItem('ams_inbox_token', state.token);
    setStatus('Connecting…');
    state.open = null;
    $('log').textContent = '';
    $('tags').textContent = '';
    $('title').textContent = 'No conversation selected';
    renderDetailHeader();
    loadList().then(function () { showError(null); loadMe().catch(function () { state.me = null; }); return stream(); })
      .catch(function (err) { setStatus('Not connected'); showError(err); });
  });
  $('availability').addEventListener('change', function () {
    api('PATCH', '/members/me', { availability: $('availability').value }).then(function (me) { state.me = me; }, showError);
  });
  $('search').addEventListener('input', renderList);
  $('mine').addEventListener('change', function () { renderList(); renderQueue(); });
  $('assign-me').addEventListener('click', function () {
    if (!state.open || !state.me) return;
    api('POST', '/conversations/' + state.open + '/assign', { member_id: state.me.id }).then(loadList, showError);
  });
  $('release').addEventListener('click', function () {
    if (!state.open) return;
    api('POST', '/conversations/' + state.open + '/release', {}).then(loadList, showError);
  });
  // Closing ends the conversation for good (the visitor is told in the transcript); the list drops it.
  $('close').addEventListener('click', function () {
    if (!state.open) return;
    showError(null);
    api('POST', '/conversations/' + state.open + '/close', {}).then(function (row) {
      state.conversations = state.conversations.map(function (c) { return c.id === row.id ? row : c; });
      renderDetailHeader();
      return loadList();
    }).catch(showError);
  });

  // ---- canned responses: `/code` suggests, Tab (or a click) expands

  function expandCanned(code) {
    var body = { short_code: code };
    if (state.open) body.conversation_id = state.open;
    return api('POST', '/canned-responses/expand', body).then(function (res) {
      $('text').value = res.text;
      $('canned').hidden = true;
      $('text').focus();
    }, showError);
  }

  $('text').addEventListener('input', function () {
    var m = /^\/([A-Za-z0-9_-]*)$/.exec($('text').value);
    clearTimeout(state.suggest);
    if (!m) { $('canned').hidden = true; return; }
    state.suggest = setTimeout(function () {
      api('GET', '/canned-responses?limit=10&q=' + encodeURIComponent(m[1])).then(function (page) {
        var list = $('canned');
        list.textContent = '';
        page.data.forEach(function (c) {
          var item = el('li', { 'data-code': c.short_code }, [el('strong', { text: '/' + c.short_code }), document.createTextNode(' ' + c.title)]);
          item.addEventListener('click', function () { expandCanned(c.short_code); });
          list.appendChild(item);
        });
        list.hidden = page.data.length === 0;
      }, showError);
    }, 120);
  });
  $('text').addEventListener('keydown', function (e) {
    var m = /^\/([A-Za-z0-9_-]+)$/.exec($('text').value);
    if (e.key !== 'Tab' || !m) return;
    e.preventDefault();
    expandCanned(m[1]);
  });
  $('take').addEventListener('click', function () { act({ action: 'take_over' }); });
  $('back').addEventListener('click', function () { act({ action: 'hand_back' }); });
  $('reply').addEventListener('submit', function (e) {
    e.preventDefault();
    var text = $('text').value.trim();
    if (!text) return;
    act({ action: 'reply', text: text }).then(function () { $('text').value = ''; });
  });
  $('tagger').addEventListener('submit', function (e) {
    e.preventDefault();
    var tag = $('tag').value.trim();
    if (!tag || !state.open) return;
    var id = state.open;
    api('GET', '/conversations/' + id + '/annotations')
      .then(function (a) { return api('PATCH', '/conversations/' + id + '/annotations', { tags: a.tags.concat([tag]) }); })
      .then(function (a) { renderTags(a); $('tag').value = ''; })
      .catch(showError);
  });
  if (state.token) $('token').value = state.token;
  Array.prototype.forEach.call(document.querySelectorAll('#token-help .origin'), function (node) { node.textContent = location.origin; });
  renderDetailHeader();
})();
