// status.js keeps the status page live: it polls the page's JSON
// (/api/v1/controllers, or /api/v1/controllers/<id>) and rewrites the
// rows and blocks that the daemon rendered first (uipage.go builds the
// same strings; keep the two in step). Every value goes into the page as
// text (textContent), never as markup: labels, messages and events come
// from whoever can write to etcd. Environment values are not in the JSON,
// and this script would not show them if they were.
'use strict';

(function () {
  const NONE = '<none>', UNKNOWN = '<unknown>', INVALID = '<invalid>', HIDDEN = '<hidden>';
  const body = document.body;
  const page = body.dataset.page;
  if (page !== 'list' && page !== 'detail') {
    return;
  }
  const pollMs = Number(body.dataset.pollMs) || 1500;
  const url = page === 'list' ? '/api/v1/controllers' : '/api/v1' + location.pathname;
  let refreshes = 0;

  // --- formats, as uipage.go's ---

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function orNone(s) { return s ? s : NONE; }

  function isZero(t) { return !t || t.startsWith('0001-01-01T'); }

  // humanDuration is k8s.io/apimachinery's duration.HumanDuration.
  function humanDuration(ms) {
    const seconds = Math.trunc(ms / 1000);
    if (seconds < -1) return '<invalid>';
    if (seconds < 0) return '0s';
    if (seconds < 120) return seconds + 's';
    const minutes = Math.floor(seconds / 60);
    if (minutes < 10) {
      const s = seconds % 60;
      return s === 0 ? minutes + 'm' : minutes + 'm' + s + 's';
    }
    if (minutes < 180) return minutes + 'm';
    const hours = Math.floor(seconds / 3600);
    if (hours < 8) {
      const m = minutes % 60;
      return m === 0 ? hours + 'h' : hours + 'h' + m + 'm';
    }
    if (hours < 48) return hours + 'h';
    if (hours < 24 * 8) {
      const h = hours % 24;
      return h === 0 ? Math.floor(hours / 24) + 'd' : Math.floor(hours / 24) + 'd' + h + 'h';
    }
    if (hours < 24 * 365 * 2) return Math.floor(hours / 24) + 'd';
    if (hours < 24 * 365 * 8) {
      const dy = Math.floor(hours / 24) % 365;
      const y = Math.floor(hours / 24 / 365);
      return dy === 0 ? y + 'y' : y + 'y' + dy + 'd';
    }
    return Math.floor(hours / 24 / 365) + 'y';
  }

  function age(now, t) {
    return isZero(t) ? UNKNOWN : humanDuration(Date.parse(now) - Date.parse(t));
  }

  function formatTime(now, t) {
    if (isZero(t)) return UNKNOWN;
    const iso = new Date(Date.parse(t)).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return iso + ' (' + age(now, t) + ' ago)';
  }

  function asOf(now) { return new Date(Date.parse(now)).toISOString().substring(11, 19) + ' UTC'; }

  function formatLabels(labels) {
    const keys = Object.keys(labels || {}).sort();
    return keys.length ? keys.map(function (k) { return k + '=' + labels[k]; }).join(',') : NONE;
  }

  function containersOf(ds) { return (ds && ds.taskTemplate.desiredState.manifest.containers) || []; }

  function images(ds) { return orNone(containersOf(ds).map(function (c) { return c.image; }).join(',')); }

  function formatPort(p) {
    let s = p.containerPort + '/' + ((p.protocol || '').toUpperCase() || 'TCP');
    if (p.hostPort) s = (p.hostIP ? p.hostIP + ':' : '') + p.hostPort + '->' + s;
    if (p.name) s += ' (' + p.name + ')';
    return s;
  }

  function formatCommand(cmd) {
    return (cmd || []).map(function (a) {
      return a === '' || /[ \t\n"'\\]/.test(a) ? JSON.stringify(a) : a;
    }).join(' ');
  }

  // bytesSize is github.com/docker/go-units' BytesSize.
  function bytesSize(n) {
    const abbrs = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'];
    let i = 0;
    while (n >= 1024 && i < abbrs.length - 1) { n /= 1024; i++; }
    return String(Number(n.toPrecision(4))) + abbrs[i];
  }

  function formatMemory(bytes) { return bytes ? bytes + ' bytes (' + bytesSize(bytes) + ')' : '<no limit>'; }

  function formatCPU(shares) { return shares ? String(shares) : '<default>'; }

  function formatHealthCheck(h) {
    const test = h.test || [];
    if (test[0] === 'NONE') return 'disabled (NONE)';
    const explicit = test.length === 0 || ['CMD', 'CMD-SHELL'].includes(test[0]) ? test : ['CMD'].concat(test);
    let s = orNone(formatCommand(explicit));
    const settings = [];
    const positive = function (d) { return d && !d.startsWith('-'); };
    if (positive(h.interval)) settings.push('interval ' + h.interval);
    if (positive(h.timeout)) settings.push('timeout ' + h.timeout);
    if (h.retries > 0) settings.push('retries ' + h.retries);
    if (positive(h.startPeriod)) settings.push('start period ' + h.startPeriod);
    if (settings.length) s += ' (' + settings.join(', ') + ')';
    return s;
  }

  function oneLine(s) { return (s || '').split(/\s+/).filter(Boolean).join(' '); }

  // conditionState is ctlview.Summarize for one condition.
  function conditionState(c) {
    if (c.status === 'True' && ['ReplicaFailure', 'CrashLoop', 'InvalidSpec'].includes(c.type)) return 'failing';
    if (c.type === 'Progressing' && c.status === 'False') return 'failing';
    if (c.type === 'Progressing' && c.status === 'True' && c.reason === 'RollingUpdate') return 'rolling';
    return 'ok';
  }

  // --- the list: one row per controller, keyed by id ---

  function listCells(now, item) {
    const st = item.status;
    const ds = item.specError ? null : item.desiredState;
    const num = function (n) { return st ? String(n) : NONE; };
    return [
      ds ? String(ds.replicas) : INVALID,
      num(st && st.replicas), num(st && st.readyReplicas), num(st && st.updatedReplicas), num(st && st.availableReplicas),
      ds ? images(ds) : INVALID,
      st ? age(now, st.creationTimestamp) : UNKNOWN,
    ];
  }

  function newRow(id) {
    const tr = el('tr');
    tr.dataset.id = id;
    const name = el('td');
    const a = el('a', '', id);
    a.href = '/controllers/' + encodeURIComponent(id);
    name.append(a);
    tr.append(name);
    for (let i = 0; i < 7; i++) tr.append(el('td', i === 6 ? 'age' : ''));
    const state = el('td');
    state.append(el('span', 'badge'), ' ', el('span', 'reasons'));
    tr.append(state);
    return tr;
  }

  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  const rows = new Map();
  function renderList(doc) {
    const tbody = document.querySelector('#controllers tbody');
    if (rows.size === 0) {
      for (const tr of tbody.rows) rows.set(tr.dataset.id, tr);
    }
    const now = doc.manager.time;
    const seen = new Set();
    const order = [];
    const counts = { failing: 0, rolling: 0 };
    for (const item of doc.items) {
      let tr = rows.get(item.id);
      if (!tr) {
        tr = newRow(item.id);
        rows.set(item.id, tr);
      }
      const cells = listCells(now, item);
      for (let i = 0; i < cells.length; i++) setText(tr.cells[i + 1], cells[i]);
      const stateCell = tr.cells[8];
      setText(stateCell.querySelector('.badge'), item.state);
      setText(stateCell.querySelector('.reasons'), (item.reasons || []).join(', '));
      tr.className = 'state-' + item.state;
      if (item.state in counts) counts[item.state]++;
      seen.add(item.id);
      order.push(tr);
    }
    for (const id of Array.from(rows.keys())) {
      if (!seen.has(id)) rows.delete(id);
    }
    const current = Array.from(tbody.rows);
    if (current.length !== order.length || current.some(function (tr, i) { return tr !== order[i]; })) {
      tbody.replaceChildren.apply(tbody, order);
    }
    let summary = doc.items.length === 1 ? '1 controller' : doc.items.length + ' controllers';
    if (counts.failing) summary += ', ' + counts.failing + ' failing';
    if (counts.rolling) summary += ', ' + counts.rolling + ' rolling';
    setText(document.getElementById('summary'), summary);
    document.getElementById('empty').hidden = doc.items.length > 0;
  }

  // --- one controller: describe's blocks ---

  function renderFields(container, fields) {
    const tbody = el('tbody');
    for (const f of fields) {
      const tr = el('tr', 'depth-' + (f.depth || 0));
      tr.append(el('th', '', f.label), el('td', f.className || '', f.value));
      tbody.append(tr);
    }
    const table = el('table', 'fields');
    table.append(tbody);
    container.replaceChildren(table);
  }

  // renderTable shows rows of cells, each cell text or [text, class].
  function renderTable(container, header, rowsData, empty) {
    if (rowsData.length === 0) {
      container.replaceChildren(el('p', 'empty', empty));
      return;
    }
    const table = el('table', 'rows');
    const head = el('tr');
    for (const h of header) head.append(el('th', '', h));
    const thead = el('thead');
    thead.append(head);
    const tbody = el('tbody');
    for (const r of rowsData) {
      const tr = el('tr', r.className || '');
      for (const c of r.cells) {
        tr.append(Array.isArray(c) ? el('td', c[1], c[0]) : el('td', '', c));
      }
      tbody.append(tr);
    }
    table.append(thead, tbody);
    container.replaceChildren(table);
  }

  function specFields(item) {
    const f = [{ label: 'ID:', value: item.id }];
    const add = function (depth, label, value) { f.push({ depth: depth, label: label, value: value }); };
    const ds = item.desiredState;
    if (item.specError || !ds) {
      add(0, 'Spec:', '<invalid: ' + (item.specError || '') + '>');
      add(0, 'Revision:', String(item.revision));
      return f;
    }
    add(0, 'Labels:', formatLabels(item.labels));
    add(0, 'Selector:', formatLabels(ds.replicasInSet));
    add(0, 'Replicas:', ds.replicas + ' desired');
    if (ds.minReadySeconds > 0) add(0, 'Min ready:', ds.minReadySeconds + 's');
    const us = ds.updateStrategy || {};
    const type = us.type || 'RollingUpdate';
    if (type === 'RollingUpdate') {
      const mu = us.maxUnavailable !== undefined ? String(us.maxUnavailable) : '1';
      const ms = us.maxSurge !== undefined ? String(us.maxSurge) : '0';
      add(0, 'Strategy:', type + ' (maxUnavailable ' + mu + ', maxSurge ' + ms + ')');
    } else {
      add(0, 'Strategy:', type);
    }
    if (us.progressDeadlineSeconds !== undefined) add(0, 'Progress deadline:', us.progressDeadlineSeconds + 's');
    if (ds.paused) add(0, 'Paused:', 'true');
    add(0, 'Template labels:', formatLabels(ds.taskTemplate.labels));
    if (ds.taskTemplate.restartedAt) add(0, 'Restarted at:', ds.taskTemplate.restartedAt);
    const containers = containersOf(ds);
    containers.forEach(function (c, i) {
      let depth = 0;
      if (containers.length > 1) {
        add(0, 'Container ' + (i + 1) + ':', orNone(c.name));
        depth = 1;
      } else if (c.name) {
        add(0, 'Container:', c.name);
      }
      add(depth, 'Image:', orNone(c.image));
      add(depth, 'Command:', orNone(formatCommand(c.command)));
      if (c.workingDir) add(depth, 'Working dir:', c.workingDir);
      add(depth, 'Ports:', orNone((c.ports || []).map(formatPort).join(', ')));
      const env = c.env || [];
      if (env.length === 0) {
        add(depth, 'Environment:', NONE);
      } else {
        add(depth, 'Environment:', '');
        for (const e of env) add(depth + 1, e.name + ':', HIDDEN); // never e.value
      }
      add(depth, 'Memory:', formatMemory(c.memory));
      add(depth, 'CPU shares:', formatCPU(c.cpu));
      if (c.healthCheck) add(depth, 'Health check:', formatHealthCheck(c.healthCheck));
      if (c.privileged) add(depth, 'Privileged:', 'true');
      if (c.hostNetwork) add(depth, 'Host network:', 'true');
      if (c.hostPID) add(depth, 'Host PID:', 'true');
      if (c.hostIPC) add(depth, 'Host IPC:', 'true');
      const volumes = (c.volumes || []).map(function (v) {
        return v.hostPath + ' -> ' + v.containerPath + ' (' + (v.readOnly ? 'ro' : 'rw') + ')';
      });
      if (volumes.length) add(depth, 'Host mounts:', volumes.join(', '));
      const devices = (c.devices || []).map(function (d) {
        return d.hostPath + ' -> ' + (d.containerPath || d.hostPath) + ' (' + (d.permissions || 'rwm') + ')';
      });
      if (devices.length) add(depth, 'Devices:', devices.join(', '));
      if ((c.capAdd || []).length) add(depth, 'Capabilities added:', c.capAdd.join(','));
    });
    add(0, 'Revision:', String(item.revision));
    return f;
  }

  function statusFields(now, item) {
    const st = item.status;
    if (!st) return [{ label: 'Status:', value: '<none> (the manager has not reported on this controller yet)' }];
    let observed = 'revision ' + st.observedRevision;
    observed += st.observedRevision === item.revision ? ' (up to date)'
      : ' (the spec is at revision ' + item.revision + '; the manager has not acted on it yet)';
    return [
      { label: 'Status:', value: st.replicas + ' current / ' + st.readyReplicas + ' ready / ' + st.updatedReplicas + ' up to date / ' + st.availableReplicas + ' available' },
      { label: 'Observed:', value: observed },
      { label: 'Last sync:', value: formatTime(now, st.lastSyncTime), className: 'age' },
      { label: 'Created:', value: formatTime(now, st.creationTimestamp), className: 'age' },
    ];
  }

  function renderDetail(doc) {
    const now = doc.manager.time;
    const item = doc.item;
    const state = document.getElementById('state');
    setText(state, item.state);
    state.className = 'badge state-' + item.state;
    setText(document.getElementById('reasons'), (item.reasons || []).join(', '));
    document.getElementById('gone').hidden = true;
    renderFields(document.getElementById('spec'), specFields(item));
    renderFields(document.getElementById('status'), statusFields(now, item));
    const conditions = ((item.status && item.status.conditions) || []).map(function (c) {
      const s = conditionState(c);
      return {
        className: s === 'ok' ? '' : 'state-' + s,
        cells: [c.type, c.status, orNone(c.reason), orNone(oneLine(c.message)), [age(now, c.lastTransitionTime), 'age']],
      };
    });
    renderTable(document.getElementById('conditions'), ['TYPE', 'STATUS', 'REASON', 'MESSAGE', 'AGE'], conditions, NONE);
    const containerHeader = ['NAME', 'NODE', 'SLOT', 'STATE', 'HEALTH', 'UP-TO-DATE', 'AGE'];
    if (doc.manager.source !== 'manager') {
      renderTable(document.getElementById('containers'), containerHeader, [],
        "<unavailable: this manager does not watch Docker; the leader's page shows them>");
    } else {
      const containers = (item.containers || []).map(function (c) {
        const ready = c.state === 'running' && (!c.health || c.health === 'healthy');
        return {
          className: ready ? '' : 'not-ready',
          cells: [c.name, c.node, orNone(c.slot), orNone(c.state), orNone(c.health), c.upToDate ? 'yes' : 'no',
            [isZero(c.created) ? UNKNOWN : age(now, c.created), 'age']],
        };
      });
      renderTable(document.getElementById('containers'), containerHeader, containers, NONE);
    }
    const events = (item.events || []).map(function (ev) {
      return { className: ev.type === 'Warning' ? 'warning' : '', cells: [[age(now, ev.time), 'age'], ev.type, ev.reason, oneLine(ev.message)] };
    });
    renderTable(document.getElementById('events'), ['AGE', 'TYPE', 'REASON', 'MESSAGE'], events, NONE);
  }

  // --- the poll ---

  const notices = {
    standby: "This manager is a standby: another one acts. Specs and statuses are read from etcd; containers are shown by the leader's page.",
    starting: 'This manager has not listed the controllers yet. Specs and statuses are read from etcd meanwhile; containers are not shown.',
  };

  function renderHead(manager) {
    const role = document.getElementById('role');
    setText(role, manager.role);
    role.className = 'role role-' + manager.role;
    role.title = "this manager's role; data from " + manager.source;
    const notice = document.getElementById('notice');
    setText(notice, notices[manager.role] || '');
    notice.hidden = !notices[manager.role];
  }

  function setLive(ok, text) {
    const live = document.getElementById('live');
    live.className = ok ? 'live' : 'live offline';
    setText(live, text);
  }

  async function poll() {
    try {
      const res = await fetch(url, { cache: 'no-store', headers: { Accept: 'application/json' } });
      if (page === 'detail' && res.status === 404) {
        document.getElementById('gone').hidden = false;
        setLive(true, 'live');
      } else if (!res.ok) {
        throw new Error((await res.json().catch(function () { return {}; })).error || res.status + ' ' + res.statusText);
      } else {
        const doc = await res.json();
        renderHead(doc.manager);
        if (page === 'list') renderList(doc); else renderDetail(doc);
        setLive(true, 'live, as of ' + asOf(doc.manager.time));
      }
      body.dataset.refreshes = String(++refreshes);
    } catch (err) {
      setLive(false, 'not updating: ' + err.message + '; retrying');
    }
    setTimeout(poll, pollMs);
  }

  setTimeout(poll, pollMs);
})();
