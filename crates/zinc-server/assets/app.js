// ZINC web chat. Plain JS, no dependencies; served by `zinc serve`.
'use strict';

(() => {
  // ---------------------------------------------------------------------------
  // Storage
  // ---------------------------------------------------------------------------
  const LS_CONVS = 'zinc.conversations.v1';
  const LS_CURRENT = 'zinc.current.v1';
  const LS_SETTINGS = 'zinc.settings.v1';

  const NUMERIC_SETTINGS = [
    // name, integer?
    ['temperature', false],
    ['top_p', false],
    ['top_k', true],
    ['min_p', false],
    ['max_tokens', true],
    ['repeat_penalty', false],
    ['seed', true],
  ];

  const DEFAULT_SETTINGS = {
    system: '',
    temperature: '',
    top_p: '',
    top_k: '',
    min_p: '',
    max_tokens: '',
    repeat_penalty: '',
    seed: '',
    // null = leave it to the chat template; true/false = the user chose.
    enable_thinking: null,
    api_key: '',
  };

  function loadJSON(key, fallback) {
    try {
      const raw = localStorage.getItem(key);
      return raw == null ? fallback : JSON.parse(raw);
    } catch (_) {
      return fallback;
    }
  }

  function saveJSON(key, value) {
    try {
      localStorage.setItem(key, JSON.stringify(value));
      return true;
    } catch (e) {
      console.warn('zinc: could not save to localStorage:', e && e.message);
      return false;
    }
  }

  let settings = Object.assign({}, DEFAULT_SETTINGS, loadJSON(LS_SETTINGS, {}));
  let conversations = loadJSON(LS_CONVS, []);
  if (!Array.isArray(conversations)) conversations = [];
  conversations = conversations.filter((c) => c && typeof c.id === 'string' && Array.isArray(c.messages));
  // A generation cut short by a reload or a closed tab.
  for (const c of conversations) {
    for (const m of c.messages) {
      if (m.role === 'assistant' && m.streaming) {
        m.streaming = false;
        m.stats = Object.assign({}, m.stats, { interrupted: true });
      }
    }
  }
  let currentId = loadJSON(LS_CURRENT, null);

  let saveTimer = 0;
  function saveConversations() {
    clearTimeout(saveTimer);
    saveTimer = 0;
    if (!saveJSON(LS_CONVS, conversations)) {
      // Out of space: drop the oldest conversations until it fits.
      const sorted = conversations.slice().sort((a, b) => a.updated - b.updated);
      while (sorted.length > 1) {
        const old = sorted.shift();
        if (old.id === currentId) continue;
        conversations = conversations.filter((c) => c !== old);
        if (saveJSON(LS_CONVS, conversations)) break;
      }
      renderSidebar();
    }
    saveJSON(LS_CURRENT, currentId);
  }
  function saveConversationsSoon() {
    if (!saveTimer) saveTimer = setTimeout(saveConversations, 1000);
  }

  // ---------------------------------------------------------------------------
  // Markdown (escape first, then build a small, known set of tags)
  // ---------------------------------------------------------------------------
  const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, (c) => ESC[c]);
  }

  const LIST_RE = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
  const FENCE_RE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;

  function renderMarkdown(src) {
    const text = String(src).replace(/\r\n?/g, '\n').replace(/\u0000/g, '').replace(/\t/g, '    ');
    return renderBlocks(text.split('\n'));
  }

  function isBlockStart(line) {
    return FENCE_RE.test(line) || /^ {0,3}#{1,6}\s/.test(line) || /^ {0,3}>/.test(line) ||
      /^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/.test(line);
  }

  function renderBlocks(lines) {
    let out = '';
    let para = [];
    const flush = () => {
      if (para.length) {
        out += '<p>' + para.map(inline).join('<br>') + '</p>';
        para = [];
      }
    };
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;

      if ((m = line.match(FENCE_RE))) {
        flush();
        const fence = m[1];
        const close = new RegExp('^ {0,3}' + (fence[0] === '`' ? '`' : '~') + '{' + fence.length + ',}[ \\t]*$');
        const indent = line.match(/^ */)[0].length;
        const body = [];
        i++;
        while (i < lines.length && !close.test(lines[i])) {
          // Drop up to the fence's own indentation from each line.
          body.push(lines[i].replace(new RegExp('^ {0,' + indent + '}'), ''));
          i++;
        }
        if (i >= lines.length && body.length && body[body.length - 1] === '') body.pop(); // still streaming
        i++; // the closing fence
        out += codeBlock(body.join('\n'), m[2]);
        continue;
      }

      if (/^\s*$/.test(line)) {
        flush();
        i++;
        continue;
      }

      if ((m = line.match(/^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/)) || (m = line.match(/^ {0,3}(#{1,6})$/))) {
        flush();
        const n = m[1].length;
        out += '<h' + n + '>' + inline(m[2] || '') + '</h' + n + '>';
        i++;
        continue;
      }

      if (/^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/.test(line)) {
        flush();
        out += '<hr>';
        i++;
        continue;
      }

      if (/^ {0,3}>/.test(line)) {
        flush();
        const quoted = [];
        while (i < lines.length && /^ {0,3}>/.test(lines[i])) {
          quoted.push(lines[i].replace(/^ {0,3}> ?/, ''));
          i++;
        }
        out += '<blockquote>' + renderBlocks(quoted) + '</blockquote>';
        continue;
      }

      if (line.includes('|') && i + 1 < lines.length && isTableSeparator(lines[i + 1])) {
        const header = splitRow(line);
        const aligns = splitRow(lines[i + 1]).map((c) => {
          const l = c.startsWith(':');
          const r = c.endsWith(':');
          return l && r ? 'center' : r ? 'right' : l ? 'left' : '';
        });
        if (header.length === aligns.length) {
          flush();
          i += 2;
          const cell = (tag, text, k) =>
            '<' + tag + (aligns[k] ? ' style="text-align:' + aligns[k] + '"' : '') + '>' + inline(text) + '</' + tag + '>';
          let html = '<div class="table-wrap"><table><thead><tr>' +
            header.map((h, k) => cell('th', h, k)).join('') + '</tr></thead><tbody>';
          while (i < lines.length && lines[i].includes('|') && !/^\s*$/.test(lines[i])) {
            const cells = splitRow(lines[i]);
            html += '<tr>' + aligns.map((_, k) => cell('td', cells[k] || '', k)).join('') + '</tr>';
            i++;
          }
          out += html + '</tbody></table></div>';
          continue;
        }
      }

      if ((m = line.match(LIST_RE)) && m[3] !== undefined) {
        // An ordered list interrupts a paragraph only when it starts at 1.
        const ordered = /\d/.test(m[2]);
        if (!(para.length && ordered && parseInt(m[2], 10) !== 1)) {
          flush();
          const r = parseList(lines, i);
          out += r.html;
          i = r.next;
          continue;
        }
      }

      para.push(line.trim());
      i++;
    }
    flush();
    return out;
  }

  function isTableSeparator(line) {
    return line.includes('|') && /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(line);
  }

  function splitRow(line) {
    let s = line.trim();
    if (s.startsWith('|')) s = s.slice(1);
    if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
    const cells = [];
    let cur = '';
    let inCode = false;
    for (let k = 0; k < s.length; k++) {
      const c = s[k];
      if (c === '\\' && s[k + 1] === '|') { cur += '|'; k++; continue; }
      if (c === '`') inCode = !inCode;
      if (c === '|' && !inCode) { cells.push(cur.trim()); cur = ''; continue; }
      cur += c;
    }
    cells.push(cur.trim());
    return cells;
  }

  function parseList(lines, start) {
    const first = lines[start].match(LIST_RE);
    const baseIndent = first[1].length;
    const ordered = /\d/.test(first[2]);
    const startNum = ordered ? parseInt(first[2], 10) : 1;
    const items = []; // {lines: [], loose: bool}
    let cur = null;
    let contentCol = 0;
    let i = start;
    while (i < lines.length) {
      const line = lines[i];
      const m = line.match(LIST_RE);
      if (m && m[3] !== undefined && m[1].length <= baseIndent + 1 && /\d/.test(m[2]) === ordered) {
        if (m[1].length < baseIndent) break;
        cur = { lines: [m[3]], loose: false };
        items.push(cur);
        contentCol = line.length - m[3].length;
        i++;
        continue;
      }
      if (/^\s*$/.test(line)) {
        // A blank line continues the list only if what follows belongs to it.
        let j = i + 1;
        while (j < lines.length && /^\s*$/.test(lines[j])) j++;
        if (j >= lines.length) break;
        const next = lines[j];
        const nm = next.match(LIST_RE);
        const nextIndent = next.match(/^ */)[0].length;
        const sameList = nm && nm[3] !== undefined && nextIndent >= baseIndent && nextIndent <= baseIndent + 1 && /\d/.test(nm[2]) === ordered;
        if (sameList) {
          cur.loose = true;
          i = j;
          continue;
        }
        if (nextIndent > baseIndent + 1) {
          cur.lines.push('');
          cur.loose = true;
          i++;
          continue;
        }
        break;
      }
      const indent = line.match(/^ */)[0].length;
      if (indent > baseIndent) {
        cur.lines.push(line.slice(Math.min(indent, contentCol)));
        i++;
        continue;
      }
      // Lazy continuation of the item's paragraph.
      if (!m && !isBlockStart(line) && i > start && !/^\s*$/.test(lines[i - 1])) {
        cur.lines.push(line.trim());
        i++;
        continue;
      }
      break;
    }
    const tag = ordered ? 'ol' : 'ul';
    let html = '<' + tag + (ordered && startNum !== 1 ? ' start="' + startNum + '"' : '') + '>';
    const loose = items.some((it) => it.loose);
    for (const item of items) {
      let body = renderBlocks(item.lines);
      if (!loose) body = body.replace(/^<p>([\s\S]*?)<\/p>/, '$1');
      html += '<li>' + body + '</li>';
    }
    return { html: html + '</' + tag + '>', next: i };
  }

  function codeBlock(code, lang) {
    const l = String(lang || '').replace(/[^\w+#.-]/g, '').slice(0, 32);
    return '<div class="code-block"><div class="code-head"><span class="code-lang">' +
      escapeHtml(l || 'text') +
      '</span><button type="button" class="copy-btn" data-testid="copy-button" aria-label="Copy code">Copy</button></div>' +
      '<pre><code' + (l ? ' class="language-' + escapeHtml(l) + '"' : '') + '>' + escapeHtml(code) + '</code></pre></div>';
  }

  function safeUrl(escapedUrl) {
    // The URL is already HTML-escaped; only http(s) is let through, and never a placeholder of
    // an already-rendered piece (\u0000N\u0000), whose HTML would land inside the href.
    return /^https?:\/\/[^\s\u0000"'<>]+$/i.test(escapedUrl) ? escapedUrl : null;
  }

  function link(escapedUrl, labelHtml) {
    return '<a href="' + escapedUrl + '" target="_blank" rel="noopener noreferrer nofollow">' + labelHtml + '</a>';
  }

  function inline(raw) {
    const slots = [];
    const keep = (html) => '\u0000' + (slots.push(html) - 1) + '\u0000';
    let s = String(raw);

    // Code spans first, on the raw text, so nothing inside them is interpreted.
    s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, ticks, code) => {
      const c = /^ .* $/.test(code) && code.trim() ? code.slice(1, -1) : code;
      return keep('<code>' + escapeHtml(c) + '</code>');
    });
    // Backslash escapes.
    s = s.replace(/\\([\\`*_{}[\]()#+\-.!~|<>])/g, (_, c) => keep(escapeHtml(c)));

    s = escapeHtml(s);

    // [label](http://url "title")
    s = s.replace(/\[([^\]\u0000]*(?:\u0000\d+\u0000[^\]\u0000]*)*)\]\(\s*([^\s()]+?)(?:\s+&quot;.*?&quot;)?\s*\)/g, (whole, label, url) => {
      const u = safeUrl(url);
      const labelHtml = emphasis(label) || url;
      return u ? keep(link(u, labelHtml)) : keep(labelHtml);
    });
    // <http://url>
    s = s.replace(/&lt;(https?:\/\/[^\s\u0000]+?)&gt;/gi, (whole, url) => {
      const u = safeUrl(url);
      return u ? keep(link(u, u)) : whole;
    });
    // Bare URLs.
    s = s.replace(/\bhttps?:\/\/[^\s\u0000]+/gi, (found) => {
      let url = found;
      const cut = url.search(/&lt;|&gt;|&quot;|&#39;/);
      let rest = '';
      if (cut >= 0) { rest = url.slice(cut); url = url.slice(0, cut); }
      const trail = url.match(/[.,;:!?*_~)\]]+$/);
      if (trail && !(trail[0].startsWith(')') && url.includes('('))) {
        rest = trail[0] + rest;
        url = url.slice(0, -trail[0].length);
      }
      const u = safeUrl(url);
      return u ? keep(link(u, u)) + rest : found;
    });

    s = emphasis(s);

    // Put the kept pieces back (they may nest).
    for (let guard = 0; guard < 8 && s.includes('\u0000'); guard++) {
      s = s.replace(/\u0000(\d+)\u0000/g, (_, n) => slots[+n]);
    }
    return s;
  }

  function emphasis(s) {
    return s
      .replace(/\*\*\*(?=\S)([\s\S]*?\S)\*\*\*/g, '<strong><em>$1</em></strong>')
      .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
      .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
      .replace(/(^|[^*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?![*\w])/g, '$1<em>$2</em>')
      .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>')
      .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
  }

  // ---------------------------------------------------------------------------
  // DOM helpers
  // ---------------------------------------------------------------------------
  const $ = (id) => document.getElementById(id);
  const els = {
    sidebar: $('sidebar'),
    scrim: $('scrim'),
    menu: $('menu-button'),
    convList: $('conv-list'),
    newChat: $('new-chat'),
    modelName: $('model-name'),
    modelDot: $('model-dot'),
    messages: $('messages'),
    thread: $('thread'),
    composer: $('composer'),
    prompt: $('prompt'),
    send: $('send-button'),
    stop: $('stop-button'),
    settingsBtn: $('settings-button'),
    settings: $('settings'),
    settingsReset: $('settings-reset'),
    thinkingHelp: $('thinking-help'),
  };

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v == null || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = v;
        else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
        else el.setAttribute(k, v === true ? '' : v);
      }
    }
    for (const c of children) if (c != null) el.append(c);
    return el;
  }

  function nearBottom() {
    const m = els.messages;
    return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
  }
  function scrollToBottom() {
    els.messages.scrollTop = els.messages.scrollHeight;
  }

  // ---------------------------------------------------------------------------
  // Model name
  // ---------------------------------------------------------------------------
  let modelId = null;
  let modelsSeq = 0;

  function authHeaders() {
    const key = (settings.api_key || '').trim();
    return key ? { Authorization: 'Bearer ' + key } : {};
  }

  async function loadModel() {
    const seq = ++modelsSeq;
    els.modelDot.className = 'model-dot';
    try {
      const res = await fetch('/v1/models', { headers: authHeaders(), cache: 'no-store' });
      if (seq !== modelsSeq) return;
      if (!res.ok) {
        const msg = await errorMessageFromResponse(res);
        els.modelName.textContent = res.status === 401 ? 'API key required (open Settings)' : 'model unavailable';
        els.modelName.title = msg;
        els.modelDot.className = 'model-dot bad';
        return;
      }
      const body = await res.json();
      const m = body && Array.isArray(body.data) && body.data[0];
      modelId = m && m.id ? String(m.id) : null;
      els.modelName.textContent = modelId || 'no model';
      const nctx = m && m.meta && m.meta.n_ctx;
      els.modelName.title = modelId ? modelId + (nctx ? ' \u00b7 context ' + nctx + ' tokens' : '') : '';
      els.modelDot.className = 'model-dot ok';
      document.title = modelId ? modelId + ' \u00b7 ZINC' : 'ZINC';
      renderEmptyState();
    } catch (e) {
      if (seq !== modelsSeq) return;
      els.modelName.textContent = 'server unreachable';
      els.modelName.title = String(e && e.message || e);
      els.modelDot.className = 'model-dot bad';
    }
  }

  // ---------------------------------------------------------------------------
  // Conversations
  // ---------------------------------------------------------------------------
  function newId() {
    return Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
  }

  function currentConv() {
    return conversations.find((c) => c.id === currentId) || null;
  }

  function titleFrom(text) {
    const t = String(text).replace(/\s+/g, ' ').trim();
    return t.length > 60 ? t.slice(0, 57).trimEnd() + '\u2026' : t || 'New chat';
  }

  function renderSidebar() {
    const list = els.convList;
    list.textContent = '';
    const sorted = conversations.slice().sort((a, b) => (b.updated || 0) - (a.updated || 0));
    if (!sorted.length) {
      list.append(h('li', { class: 'conv-empty', text: 'No conversations yet' }));
      return;
    }
    for (const c of sorted) {
      const active = c.id === currentId;
      const li = h('li', { class: 'conv-item' + (active ? ' active' : ''), 'data-testid': 'conversation-item' },
        h('button', {
          type: 'button',
          class: 'conv-open',
          'aria-current': active ? 'true' : null,
          title: c.title,
          onclick: () => switchTo(c.id),
        }, h('span', { class: 'conv-title', text: c.title || 'New chat' })),
        h('button', {
          type: 'button',
          class: 'conv-delete',
          'aria-label': 'Delete conversation: ' + (c.title || 'New chat'),
          title: 'Delete',
          'data-testid': 'delete-conversation',
          onclick: () => deleteConv(c.id),
        }, trashIcon()));
      list.append(li);
    }
  }

  function trashIcon() {
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('width', '15');
    svg.setAttribute('height', '15');
    svg.setAttribute('aria-hidden', 'true');
    const p = document.createElementNS(ns, 'path');
    p.setAttribute('d', 'M5 7h14M10 7V5h4v2M7 7l1 12h8l1-12');
    p.setAttribute('fill', 'none');
    p.setAttribute('stroke', 'currentColor');
    p.setAttribute('stroke-width', '2');
    p.setAttribute('stroke-linecap', 'round');
    p.setAttribute('stroke-linejoin', 'round');
    svg.append(p);
    return svg;
  }

  function switchTo(id) {
    if (id === currentId) { closeSidebar(); return; }
    stopGeneration();
    currentId = id;
    saveJSON(LS_CURRENT, currentId);
    renderSidebar();
    renderThread();
    closeSidebar();
    els.prompt.focus();
  }

  function newChat() {
    stopGeneration();
    currentId = null; // created on the first message
    saveJSON(LS_CURRENT, currentId);
    renderSidebar();
    renderThread();
    closeSidebar();
    els.prompt.focus();
  }

  function deleteConv(id) {
    if (id === currentId) stopGeneration();
    conversations = conversations.filter((c) => c.id !== id);
    if (id === currentId) currentId = null;
    saveConversations();
    renderSidebar();
    renderThread();
  }

  // ---------------------------------------------------------------------------
  // Messages
  // ---------------------------------------------------------------------------
  function renderEmptyState() {
    const conv = currentConv();
    if (conv && conv.messages.length) return;
    els.thread.textContent = '';
    els.thread.append(h('div', { class: 'empty' },
      h('div', { class: 'empty-logo', 'aria-hidden': 'true', text: 'Zn' }),
      h('h1', { text: 'How can I help?' }),
      h('p', { text: modelId ? 'Chatting with ' + modelId + ', running locally.' : 'Local inference with ZINC.' })));
  }

  function renderThread() {
    const conv = currentConv();
    els.thread.textContent = '';
    if (!conv || !conv.messages.length) {
      renderEmptyState();
      return;
    }
    for (const m of conv.messages) {
      els.thread.append(m.role === 'user' ? userEl(m) : assistantEl(m));
    }
    updateRegenerateButtons();
    scrollToBottom();
  }

  function userEl(m) {
    return h('div', { class: 'msg user', 'data-testid': 'user-message' },
      h('div', { class: 'bubble', text: m.content }));
  }

  // Each assistant element keeps references to its parts so streaming only
  // touches what changed.
  const partsOf = new WeakMap();

  function assistantEl(m) {
    const summaryLabel = h('span', { class: 'thinking-label' });
    const thinkingText = h('div', { class: 'thinking-text' });
    const thinking = h('details', { class: 'thinking', 'data-testid': 'thinking', hidden: true },
      h('summary', null, summaryLabel), thinkingText);
    thinking.addEventListener('toggle', () => {
      if (thinking.dataset.auto === '1') { thinking.dataset.auto = ''; return; }
      thinking.dataset.userToggled = '1';
    });
    const waiting = h('div', { class: 'waiting', role: 'status', 'aria-label': 'Waiting for the model', hidden: true },
      h('span'), h('span'), h('span'));
    const content = h('div', { class: 'content markdown', 'data-testid': 'assistant-content' });
    const error = h('div', { class: 'error', 'data-testid': 'error', role: 'alert', hidden: true });
    const stats = h('span', { class: 'stats', 'data-testid': 'message-stats' });
    const regen = h('button', {
      type: 'button', class: 'msg-action', 'data-testid': 'regenerate-button', hidden: true,
      'aria-label': 'Regenerate response', onclick: regenerate,
    }, '\u21bb Regenerate');
    const copy = h('button', {
      type: 'button', class: 'msg-action', 'aria-label': 'Copy response', 'data-testid': 'copy-message',
      onclick: (ev) => copyText(m.content || '', ev.currentTarget),
    }, 'Copy');
    const footer = h('div', { class: 'msg-footer' }, stats, h('span', { class: 'msg-actions' }, copy, regen));
    const el = h('div', { class: 'msg assistant', 'data-testid': 'assistant-message' },
      thinking, waiting, content, error, footer);
    partsOf.set(el, { m, thinking, summaryLabel, thinkingText, waiting, content, error, stats, footer, regen, copy,
      renderedContent: null, renderedReasoning: null });
    updateAssistantEl(el);
    return el;
  }

  function fmtSeconds(ms) {
    const s = ms / 1000;
    return s < 10 ? s.toFixed(1) + ' s' : Math.round(s) + ' s';
  }

  function updateAssistantEl(el) {
    const p = partsOf.get(el);
    if (!p) return;
    const m = p.m;
    const streaming = !!m.streaming;
    el.classList.toggle('streaming', streaming);
    el.setAttribute('aria-busy', streaming ? 'true' : 'false');

    // Thinking
    const reasoning = m.reasoning || '';
    if (reasoning) {
      p.thinking.hidden = false;
      const thinkingNow = streaming && !m.content && !m.thinkMs;
      if (p.renderedReasoning !== reasoning) {
        const t = p.thinkingText;
        const follow = t.scrollHeight - t.scrollTop - t.clientHeight < 24;
        t.textContent = reasoning;
        p.renderedReasoning = reasoning;
        if (thinkingNow && follow) t.scrollTop = t.scrollHeight;
      }
      let label;
      if (thinkingNow) label = 'Thinking\u2026';
      else if (m.thinkMs != null) label = 'Thought for ' + fmtSeconds(m.thinkMs);
      else label = 'Thoughts';
      if (p.summaryLabel.textContent !== label) p.summaryLabel.textContent = label;
      p.thinking.classList.toggle('active', thinkingNow);
      if (p.thinking.dataset.userToggled !== '1') {
        const wantOpen = thinkingNow;
        if (p.thinking.open !== wantOpen) {
          p.thinking.dataset.auto = '1';
          p.thinking.open = wantOpen;
        }
      }
    } else {
      p.thinking.hidden = true;
    }

    // Waiting dots before the first token.
    p.waiting.hidden = !(streaming && !m.content && !reasoning);

    // Answer
    const text = m.content || '';
    if (p.renderedContent !== text) {
      p.content.innerHTML = renderMarkdown(text); // renderMarkdown escapes everything it emits
      p.renderedContent = text;
    }
    p.content.hidden = !text && !streaming;
    p.content.classList.toggle('streaming', streaming && !!text);

    // Error
    if (m.error) {
      p.error.hidden = false;
      p.error.textContent = m.error;
    } else {
      p.error.hidden = true;
    }

    // Stats and actions
    const statsText = streaming ? '' : formatStats(m);
    p.stats.textContent = statsText;
    p.footer.hidden = streaming;
    p.copy.hidden = !text;
  }

  function formatStats(m) {
    const s = m.stats || {};
    const parts = [];
    if (s.stopped) parts.push('stopped');
    if (s.interrupted) parts.push('interrupted');
    if (s.tps != null && isFinite(s.tps)) parts.push(s.tps.toFixed(1) + ' tok/s');
    if (s.completionTokens != null) parts.push((s.approx ? '~' : '') + s.completionTokens + ' tokens');
    if (s.promptTokens != null) {
      parts.push('prompt ' + s.promptTokens + ' tokens');
    }
    if (s.elapsedMs != null && (parts.length || !m.error)) parts.push(fmtSeconds(s.elapsedMs));
    if (s.finishReason === 'length') parts.push('max tokens reached');
    return parts.join(' \u00b7 ');
  }

  function lastAssistantEl() {
    const all = els.thread.querySelectorAll('.msg.assistant');
    return all.length ? all[all.length - 1] : null;
  }

  function updateRegenerateButtons() {
    const conv = currentConv();
    const last = lastAssistantEl();
    for (const el of els.thread.querySelectorAll('.msg.assistant')) {
      const p = partsOf.get(el);
      if (!p) continue;
      const lastMsg = conv && conv.messages[conv.messages.length - 1];
      p.regen.hidden = !(el === last && !generating() && lastMsg === p.m);
    }
  }

  // ---------------------------------------------------------------------------
  // Copy
  // ---------------------------------------------------------------------------
  async function copyText(text, button) {
    let ok = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch (_) { ok = false; }
    if (!ok) {
      const ta = document.createElement('textarea');
      ta.value = text;
      ta.setAttribute('readonly', '');
      ta.style.position = 'fixed';
      ta.style.top = '-1000px';
      ta.style.opacity = '0';
      document.body.append(ta);
      ta.select();
      try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
      ta.remove();
    }
    if (button) {
      const old = button.dataset.label || button.textContent;
      button.dataset.label = old;
      button.textContent = ok ? 'Copied' : 'Copy failed';
      button.classList.toggle('copied', ok);
      clearTimeout(button._t);
      button._t = setTimeout(() => {
        button.textContent = old;
        button.classList.remove('copied');
      }, 1500);
    }
  }

  els.thread.addEventListener('click', (ev) => {
    const btn = ev.target.closest('.copy-btn');
    if (!btn) return;
    const code = btn.closest('.code-block')?.querySelector('pre code');
    if (code) copyText(code.textContent, btn);
  });

  // ---------------------------------------------------------------------------
  // Generation
  // ---------------------------------------------------------------------------
  let gen = null; // { controller, conv, msg, el }

  function generating() {
    return gen !== null;
  }

  function setGeneratingUI(on) {
    els.stop.hidden = !on;
    els.send.hidden = on;
    els.send.disabled = on;
    els.composer.classList.toggle('busy', on);
    updateRegenerateButtons();
  }

  function stopGeneration() {
    if (gen) gen.controller.abort();
  }

  function buildRequest(conv) {
    const messages = [];
    const sys = (settings.system || '').trim();
    if (sys) messages.push({ role: 'system', content: settings.system });
    for (const m of conv.messages) {
      if (m.role === 'assistant' && !(m.content || '').trim()) continue;
      if (m.role !== 'user' && m.role !== 'assistant') continue;
      const prev = messages[messages.length - 1];
      // Keep roles alternating (some chat templates insist): merge neighbours.
      if (prev && prev.role === m.role && prev.role !== 'system') {
        prev.content += '\n\n' + m.content;
      } else {
        messages.push({ role: m.role, content: m.content });
      }
    }
    const body = { messages, stream: true, stream_options: { include_usage: true } };
    for (const [name, integer] of NUMERIC_SETTINGS) {
      const raw = String(settings[name] ?? '').trim();
      if (raw === '') continue;
      const v = Number(raw);
      if (!isFinite(v)) continue;
      body[name] = integer ? Math.trunc(v) : v;
    }
    if (typeof settings.enable_thinking === 'boolean') {
      body.chat_template_kwargs = { enable_thinking: settings.enable_thinking };
    }
    return body;
  }

  async function errorMessageFromResponse(res) {
    let text = '';
    try { text = await res.text(); } catch (_) { /* ignore */ }
    let msg = '';
    try {
      const j = JSON.parse(text);
      if (j && j.error) msg = typeof j.error === 'string' ? j.error : j.error.message || JSON.stringify(j.error);
    } catch (_) {
      msg = text.trim().slice(0, 500);
    }
    return 'HTTP ' + res.status + (res.statusText ? ' ' + res.statusText : '') + (msg ? ': ' + msg : '');
  }

  function sendPrompt() {
    if (generating()) return;
    const text = els.prompt.value;
    if (!text.trim()) {
      els.prompt.focus();
      return;
    }
    let conv = currentConv();
    if (!conv) {
      conv = { id: newId(), title: titleFrom(text), created: Date.now(), updated: Date.now(), messages: [] };
      conversations.push(conv);
      currentId = conv.id;
      els.thread.textContent = '';
    }
    if (!conv.messages.some((m) => m.role === 'user')) conv.title = titleFrom(text);
    const um = { role: 'user', content: text };
    conv.messages.push(um);
    els.thread.append(userEl(um));
    els.prompt.value = '';
    autosize();
    generate(conv);
  }

  function regenerate() {
    if (generating()) return;
    const conv = currentConv();
    if (!conv) return;
    const last = conv.messages[conv.messages.length - 1];
    if (!last || last.role !== 'assistant') return;
    conv.messages.pop();
    const el = lastAssistantEl();
    if (el && partsOf.get(el)?.m === last) el.remove();
    generate(conv);
  }

  async function generate(conv) {
    const msg = { role: 'assistant', content: '', reasoning: '', streaming: true, stats: {} };
    conv.messages.push(msg);
    conv.updated = Date.now();
    saveConversations();
    renderSidebar();

    const el = assistantEl(msg);
    els.thread.append(el);
    scrollToBottom();

    const controller = new AbortController();
    gen = { controller, conv, msg, el };
    setGeneratingUI(true);

    const tStart = performance.now();
    let tFirst = 0;
    let tLast = 0;
    let tReasonStart = 0;
    let deltas = 0;
    let usage = null;
    let timings = null;
    let finishReason = null;
    let gotDone = false;
    let stopped = false;

    // Coalesce updates to one per frame; the timer covers background tabs,
    // where requestAnimationFrame does not run.
    let pending = false;
    let raf = 0;
    let timer = 0;
    const cancelRender = () => {
      pending = false;
      cancelAnimationFrame(raf);
      clearTimeout(timer);
    };
    const render = () => {
      if (!pending) return;
      cancelRender();
      if (!el.isConnected) return;
      const stick = nearBottom();
      updateAssistantEl(el);
      if (stick) scrollToBottom();
    };
    const scheduleRender = () => {
      if (pending) return;
      pending = true;
      raf = requestAnimationFrame(render);
      timer = setTimeout(render, 150);
    };

    const onEvent = (data) => {
      if (data === '[DONE]') { gotDone = true; return; }
      let j;
      try { j = JSON.parse(data); } catch (_) { return; }
      if (j.error) {
        msg.error = typeof j.error === 'string' ? j.error : (j.error.message || JSON.stringify(j.error));
        return;
      }
      if (j.usage) usage = j.usage;
      if (j.timings) timings = j.timings;
      const ch = Array.isArray(j.choices) ? j.choices[0] : null;
      if (!ch) return;
      const d = ch.delta || {};
      const now = performance.now();
      const r = typeof d.reasoning_content === 'string' ? d.reasoning_content
        : typeof d.reasoning === 'string' ? d.reasoning : '';
      const c = typeof d.content === 'string' ? d.content : '';
      if (r) {
        if (!tReasonStart) tReasonStart = now;
        msg.reasoning += r;
      }
      if (c) {
        if (msg.reasoning && msg.thinkMs == null) msg.thinkMs = now - (tReasonStart || tStart);
        msg.content += c;
      }
      if (r || c) {
        deltas++;
        if (!tFirst) tFirst = now;
        tLast = now;
        scheduleRender();
        saveConversationsSoon();
      }
      if (ch.finish_reason) finishReason = ch.finish_reason;
    };

    try {
      const res = await fetch('/v1/chat/completions', {
        method: 'POST',
        headers: Object.assign({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }, authHeaders()),
        body: JSON.stringify(buildRequest(conv)),
        signal: controller.signal,
        cache: 'no-store',
      });
      if (!res.ok) {
        msg.error = await errorMessageFromResponse(res);
      } else if (!res.body) {
        msg.error = 'The browser did not expose a response stream.';
      } else {
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buf = '';
        let dataLines = [];
        const feedLine = (line) => {
          if (line === '') {
            if (dataLines.length) onEvent(dataLines.join('\n'));
            dataLines = [];
            return;
          }
          if (line.startsWith(':')) return; // comment / keep-alive
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? '' : line.slice(colon + 1);
          if (value.startsWith(' ')) value = value.slice(1);
          if (field === 'data') dataLines.push(value);
        };
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          let nl;
          while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
            const line = buf.slice(0, nl);
            const len = buf[nl] === '\r' && buf[nl + 1] === '\n' ? 2 : 1;
            buf = buf.slice(nl + len);
            feedLine(line);
          }
          if (gotDone) break;
        }
        buf += decoder.decode();
        if (buf) feedLine(buf);
        feedLine('');
        if (gotDone) reader.cancel().catch(() => {});
        if (!gotDone && !finishReason && !msg.error) {
          msg.error = 'The connection closed before the answer was complete.';
        }
      }
    } catch (e) {
      if (e && e.name === 'AbortError') {
        stopped = true;
      } else {
        msg.error = 'Network error: could not reach the ZINC server (' + (e && e.message || e) + ').';
      }
    }

    // Finalize.
    const tEnd = performance.now();
    if (msg.reasoning && msg.thinkMs == null) msg.thinkMs = (tLast || tEnd) - (tReasonStart || tStart);
    const stats = { elapsedMs: tEnd - tStart };
    if (stopped) stats.stopped = true;
    if (finishReason) stats.finishReason = finishReason;
    if (usage && !stopped) {
      if (usage.completion_tokens != null) stats.completionTokens = usage.completion_tokens;
      if (usage.prompt_tokens != null) stats.promptTokens = usage.prompt_tokens;
    }
    if (timings && timings.predicted_per_second != null && !stopped) {
      stats.tps = Number(timings.predicted_per_second);
      if (timings.prompt_per_second) stats.promptTps = Number(timings.prompt_per_second);
      stats.tpsSource = 'server';
    } else if (deltas > 0) {
      // Measured here: the first token waits for the prompt, so count the
      // ones after it over the time they took.
      const span = tLast - tFirst;
      stats.tps = deltas > 1 && span > 0 ? (deltas - 1) / (span / 1000) : deltas / ((tLast - tStart) / 1000);
      stats.tpsSource = 'client';
    }
    if (stats.completionTokens == null && deltas > 0) {
      stats.completionTokens = deltas;
      stats.approx = true;
    }
    msg.stats = stats;
    msg.streaming = false;
    if (!msg.content && !msg.reasoning && !msg.error && !stopped) msg.error = 'The model returned an empty answer.';

    cancelRender();
    gen = null;
    conv.updated = Date.now();
    saveConversations();
    if (el.isConnected) {
      const stick = nearBottom();
      updateAssistantEl(el);
      if (stick) scrollToBottom();
    }
    setGeneratingUI(false);
  }

  // ---------------------------------------------------------------------------
  // Composer
  // ---------------------------------------------------------------------------
  function autosize() {
    const ta = els.prompt;
    ta.style.height = 'auto';
    ta.style.height = Math.min(ta.scrollHeight, Math.round(window.innerHeight * 0.4)) + 'px';
  }

  els.prompt.addEventListener('input', autosize);
  els.prompt.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
      ev.preventDefault();
      sendPrompt();
    }
  });
  els.composer.addEventListener('submit', (ev) => {
    ev.preventDefault();
    sendPrompt();
  });
  els.stop.addEventListener('click', () => {
    stopGeneration();
    els.prompt.focus();
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' || els.settings.open) return;
    if (document.body.classList.contains('sidebar-open')) closeSidebar();
    else if (generating()) stopGeneration();
  });

  // ---------------------------------------------------------------------------
  // Sidebar (off-canvas on narrow screens)
  // ---------------------------------------------------------------------------
  function openSidebar() {
    document.body.classList.add('sidebar-open');
    els.scrim.hidden = false;
    els.menu.setAttribute('aria-expanded', 'true');
  }
  function closeSidebar() {
    document.body.classList.remove('sidebar-open');
    els.scrim.hidden = true;
    els.menu.setAttribute('aria-expanded', 'false');
  }
  els.menu.addEventListener('click', () => {
    if (document.body.classList.contains('sidebar-open')) closeSidebar();
    else openSidebar();
  });
  els.scrim.addEventListener('click', closeSidebar);
  els.newChat.addEventListener('click', newChat);

  // ---------------------------------------------------------------------------
  // Settings
  // ---------------------------------------------------------------------------
  const TEXT_FIELDS = ['system', 'temperature', 'top_p', 'top_k', 'min_p', 'max_tokens', 'repeat_penalty', 'seed', 'api_key'];
  const thinkingBox = $('set-enable_thinking');

  function fillSettingsForm() {
    for (const name of TEXT_FIELDS) $('set-' + name).value = settings[name] ?? '';
    thinkingBox.checked = settings.enable_thinking !== false;
    els.thinkingHelp.textContent = typeof settings.enable_thinking === 'boolean' ? 'sent to the chat template' : 'model default';
  }

  function saveSettings() {
    saveJSON(LS_SETTINGS, settings);
  }

  let keyTimer = 0;
  for (const name of TEXT_FIELDS) {
    $('set-' + name).addEventListener('input', (ev) => {
      settings[name] = ev.target.value;
      saveSettings();
      if (name === 'api_key') {
        clearTimeout(keyTimer);
        keyTimer = setTimeout(loadModel, 400);
      }
    });
  }
  thinkingBox.addEventListener('change', () => {
    settings.enable_thinking = thinkingBox.checked;
    els.thinkingHelp.textContent = 'sent to the chat template';
    saveSettings();
  });
  els.settingsReset.addEventListener('click', () => {
    const key = settings.api_key;
    settings = Object.assign({}, DEFAULT_SETTINGS, { api_key: key });
    saveSettings();
    fillSettingsForm();
  });
  els.settingsBtn.addEventListener('click', () => {
    fillSettingsForm();
    if (typeof els.settings.showModal === 'function') els.settings.showModal();
    else els.settings.setAttribute('open', '');
  });
  els.settings.addEventListener('click', (ev) => {
    // Click on the backdrop closes.
    if (ev.target === els.settings) els.settings.close();
  });
  els.settings.addEventListener('close', () => els.prompt.focus());

  // Other tabs keep in step.
  window.addEventListener('storage', (ev) => {
    if (ev.key === LS_SETTINGS) {
      settings = Object.assign({}, DEFAULT_SETTINGS, loadJSON(LS_SETTINGS, {}));
    } else if (ev.key === LS_CONVS && !generating()) {
      const fresh = loadJSON(LS_CONVS, []);
      if (Array.isArray(fresh)) {
        conversations = fresh;
        renderSidebar();
        renderThread();
      }
    }
  });
  window.addEventListener('pagehide', () => { if (saveTimer) saveConversations(); });

  // ---------------------------------------------------------------------------
  // Start
  // ---------------------------------------------------------------------------
  if (currentId && !currentConv()) currentId = null;
  fillSettingsForm();
  renderSidebar();
  renderThread();
  setGeneratingUI(false);
  autosize();
  loadModel();
  els.prompt.focus();

  // For tests and debugging.
  window.zinc = { renderMarkdown };
})();
