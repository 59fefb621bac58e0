// status.js keeps the status page live: it polls the page's JSON
// (/api/v1/controllers, /api/v1/controllers/<id>, /api/v1/nodes or
// /api/v1/events) and rewrites the rows and blocks that the daemon
// rendered first. The JSON carries, under "page", the very strings the
// daemon's templates render (uipage.go): this script formats nothing, it
// only places them. Every value goes into the page as text (textContent),
// never as markup: labels, messages and events come from whoever can write
// to etcd. It asks with the last ETag, so that an unchanged document costs
// a 304, and it does not poll while the tab is hidden.
'use strict';

(function () {
  const body = document.body;
  const page = body.dataset.page;
  const urls = {
    list: '/api/v1/controllers',
    detail: '/api/v1' + location.pathname,
    nodes: '/api/v1/nodes',
    events: '/api/v1/events',
  };
  if (!(page in urls)) {
    return;
  }
  const url = urls[page];
  const pollMs = Number(body.dataset.pollMs) || 1500;
  let refreshes = 0;
  let notModified = 0;
  let etag = '';
  let timer = 0;
  let inFlight = false;

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  // --- the filter: rows whose text lacks what is typed are hidden ---

  const filter = document.getElementById('filter');

  function filterRows() {
    if (!filter) return;
    const q = filter.value.trim().toLowerCase();
    const target = document.getElementById(filter.getAttribute('aria-controls'));
    const trs = target ? target.querySelectorAll('tbody tr') : [];
    let shown = 0;
    for (const tr of trs) {
      tr.hidden = q !== '' && !tr.textContent.toLowerCase().includes(q);
      if (!tr.hidden) shown++;
    }
    const nomatch = document.getElementById('nomatch');
    if (nomatch) nomatch.hidden = trs.length === 0 || shown > 0;
  }

  if (filter) filter.addEventListener('input', filterRows);

  // --- blocks: the templates' "fields" and "table" (ui/blocks.html) ---

  function renderFields(container, fields) {
    const tbody = el('tbody');
    for (const f of fields || []) {
      const tr = el('tr', 'depth-' + f.depth);
      const th = el('th', '', f.label);
      th.scope = 'row';
      tr.append(th, el('td', f.class || '', f.value));
      tbody.append(tr);
    }
    const table = el('table', 'fields');
    table.append(tbody);
    container.replaceChildren(table);
  }

  function renderTable(container, t) {
    const rowsData = t.rows || [];
    if (rowsData.length === 0) {
      container.replaceChildren(el('p', 'empty', t.empty));
      return;
    }
    const head = el('tr');
    for (const h of t.header) {
      const th = el('th', '', h);
      th.scope = 'col';
      head.append(th);
    }
    const thead = el('thead');
    thead.append(head);
    const tbody = el('tbody');
    for (const r of rowsData) {
      const tr = el('tr', r.class || '');
      if (r.key) tr.dataset.key = r.key;
      for (const c of r.cells) tr.append(el('td', c.class || '', c.text));
      tbody.append(tr);
    }
    const table = el('table', 'rows');
    table.append(thead, tbody);
    container.replaceChildren(table);
  }

  // --- the list: one row per controller, keyed by id ---

  const listFields = ['desired', 'current', 'ready', 'upToDate', 'available', 'status', 'image', 'age'];

  function newRow(id) {
    const tr = el('tr');
    tr.dataset.id = id;
    const name = el('td');
    const a = el('a', '', id);
    a.href = '/controllers/' + encodeURIComponent(id);
    name.append(a);
    tr.append(name);
    for (let i = 0; i < listFields.length; i++) tr.append(el('td', i === listFields.length - 1 ? 'age' : ''));
    const state = el('td');
    state.append(el('span', 'badge'), ' ', el('span', 'reasons'));
    tr.append(state);
    return tr;
  }

  const rows = new Map();
  function renderList(p) {
    const tbody = document.querySelector('#controllers tbody');
    if (rows.size === 0) {
      for (const tr of tbody.rows) rows.set(tr.dataset.id, tr);
    }
    const seen = new Set();
    const order = [];
    for (const row of p.rows || []) {
      let tr = rows.get(row.id);
      if (!tr) {
        tr = newRow(row.id);
        rows.set(row.id, tr);
      }
      listFields.forEach(function (f, i) { setText(tr.cells[i + 1], row[f]); });
      const stateCell = tr.cells[listFields.length + 1];
      setText(stateCell.querySelector('.badge'), row.state);
      setText(stateCell.querySelector('.reasons'), row.reasons);
      tr.className = 'state-' + row.state;
      seen.add(row.id);
      order.push(tr);
    }
    for (const id of Array.from(rows.keys())) {
      if (!seen.has(id)) rows.delete(id);
    }
    const current = Array.from(tbody.rows);
    if (current.length !== order.length || current.some(function (tr, i) { return tr !== order[i]; })) {
      tbody.replaceChildren.apply(tbody, order);
    }
    setText(document.getElementById('summary'), p.summary);
    document.getElementById('empty').hidden = order.length > 0;
  }

  // --- one controller: describe's blocks ---

  function renderDetail(p) {
    const state = document.getElementById('state');
    setText(state, p.state);
    state.className = 'badge state-' + p.state;
    setText(document.getElementById('reasons'), p.reasons);
    document.getElementById('gone').hidden = true;
    renderFields(document.getElementById('spec'), p.spec);
    renderFields(document.getElementById('status'), p.status);
    renderTable(document.getElementById('conditions'), p.conditions);
    renderTable(document.getElementById('containers'), p.containers);
    renderTable(document.getElementById('images'), p.images);
    renderTable(document.getElementById('events'), p.events);
  }

  // --- the nodes and the event feed: a summary and one table (the nodes
  // view has a second: the gone nodes' last containers) ---

  function renderOneTable(id, t) {
    return function (p) {
      setText(document.getElementById('summary'), p.summary);
      renderTable(document.getElementById(id), p[t]);
    };
  }

  const renderers = {
    list: renderList,
    detail: renderDetail,
    nodes: function (p) {
      renderOneTable('nodes', 'nodes')(p);
      renderTable(document.getElementById('gone'), p.gone);
    },
    events: renderOneTable('events', 'events'),
  };

  // --- the poll ---

  function renderHead(p) {
    const role = document.getElementById('role');
    setText(role, p.role);
    role.className = 'role role-' + p.role;
    role.title = "this manager's role; data from " + p.source;
    const notice = document.getElementById('notice');
    setText(notice, p.notice);
    notice.hidden = !p.notice;
  }

  function setLive(ok, text) {
    const live = document.getElementById('live');
    live.className = ok ? 'live' : 'live offline';
    setText(live, text);
  }

  async function poll() {
    timer = 0;
    inFlight = true;
    try {
      const headers = { Accept: 'application/json' };
      if (etag) headers['If-None-Match'] = etag;
      const res = await fetch(url, { cache: 'no-store', headers: headers });
      const asOf = res.headers.get('X-As-Of') || '';
      if (page === 'detail' && res.status === 404) {
        document.getElementById('gone').hidden = false;
        etag = '';
        setLive(true, 'live');
      } else if (res.status === 304) {
        body.dataset.notModified = String(++notModified);
        setLive(true, 'live, as of ' + asOf);
      } else if (!res.ok) {
        throw new Error((await res.json().catch(function () { return {}; })).error || res.status + ' ' + res.statusText);
      } else {
        const doc = await res.json();
        etag = res.headers.get('ETag') || '';
        renderHead(doc.page);
        renderers[page](doc.page);
        filterRows();
        setLive(true, 'live, as of ' + asOf);
      }
      body.dataset.refreshes = String(++refreshes);
    } catch (err) {
      setLive(false, 'not updating: ' + err.message + '; retrying');
    }
    inFlight = false;
    schedule();
  }

  // schedule polls again after pollMs, unless the tab is hidden: then
  // visibilitychange polls once it is shown again.
  function schedule() {
    if (!document.hidden && !inFlight && timer === 0) timer = setTimeout(poll, pollMs);
  }

  document.addEventListener('visibilitychange', function () {
    if (document.hidden) {
      clearTimeout(timer);
      timer = 0;
    } else if (!inFlight && timer === 0) {
      timer = setTimeout(poll, 0);
    }
  });

  schedule();
})();
