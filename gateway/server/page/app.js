// The fluxgit gateway approval page. Everything an agent wrote (reasons,
// refs, paths, patches, messages) is put into the page with textContent or
// setAttribute, never parsed as HTML.
'use strict';

(function () {
  var state = { csrf: '', skew: 0, es: null, retry: 0, refreshing: false, again: false, signedOut: false, pendingOffset: 0 };
  var cardNodes = new Map(); // previewId → {node, version}
  // Hearing about proposals (issue 25): the pending proposals already
  // seen (null until the first state arrives: those were on the page
  // when it opened, so no notification announces them), the gateway's
  // time of that first state (a proposal created before it is not an
  // arrival, even when paging first shows it later), and the
  // notifications the browser showed.
  var heard = { known: null, since: 0, shown: 0, last: '' };

  // ---- small DOM helpers ----

  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = String(v);
        else if (v === true) e.setAttribute(k, '');
        else e.setAttribute(k, String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }

  function add(parent, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { add(parent, c); }); return; }
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }

  function $(id) { return document.getElementById(id); }

  function short(oid) { return typeof oid === 'string' && oid.length > 12 ? oid.slice(0, 12) : (oid || ''); }

  function showAlert(msg) {
    var a = $('alert');
    a.textContent = msg || '';
    a.hidden = !msg;
  }

  function when(iso) {
    if (!iso) return '';
    var d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleString();
  }

  // ---- session ----

  function showSignin(kind) {
    state.signedOut = true;
    $('signin-example').textContent = 'Approval page: ' + location.origin + '/?s=…';
    $('app').hidden = true;
    $('signin').hidden = false;
    if (kind === 'stale') {
      $('signin-why').textContent = 'That link is not valid for this gateway: it was probably printed by an earlier start.';
    }
    setLive('offline', 'no session');
    setTitle(0);
    if (state.es) { state.es.close(); state.es = null; }
  }

  // ---- live updates ----

  function setLive(s, text) {
    var l = $('live');
    l.setAttribute('data-state', s);
    l.querySelector('.live-text').textContent = text;
  }

  function connect() {
    if (state.signedOut) return;
    if (state.es) state.es.close();
    var es = new EventSource('/ui/api/events');
    state.es = es;
    setLive('connecting', 'connecting');
    es.addEventListener('open', function () {
      state.retry = 0;
      setLive('live', 'live');
      refresh(); // catch up on anything missed while disconnected
    });
    es.addEventListener('change', function () { refresh(); });
    es.addEventListener('error', function () {
      es.close();
      if (state.es !== es) return;
      state.es = null;
      setLive('offline', 'reconnecting');
      var delay = Math.min(30000, 1000 * Math.pow(2, state.retry++));
      setTimeout(function () { if (!state.es) { refresh(); connect(); } }, delay);
    });
  }

  function refresh() {
    if (state.refreshing) { state.again = true; return; }
    state.refreshing = true;
    var asked = state.pendingOffset;
    var url = '/ui/api/state' + (asked > 0 ? '?pendingOffset=' + asked : '');
    fetch(url, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        if (res.status === 403) { showSignin('none'); return null; }
        return res.json().then(function (body) {
          if (!res.ok) throw new Error(body && body.error ? body.error : 'HTTP ' + res.status);
          return body;
        });
      })
      .then(function (st) {
        if (!st) return;
        render(st, asked);
      })
      .catch(function (err) { showAlert('Could not load the proposals: ' + err.message); })
      .then(function () {
        state.refreshing = false;
        if (state.again) { state.again = false; refresh(); }
      });
  }

  function post(url, body, card) {
    var alertBox = card ? card.querySelector('.card-alert') : null;
    if (alertBox) { alertBox.textContent = ''; alertBox.hidden = true; }
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': state.csrf },
      body: JSON.stringify(body)
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (out) {
        if (!res.ok) throw new Error(out && out.error ? out.error : 'HTTP ' + res.status);
        return out;
      });
    }).then(function (out) {
      showAlert('');
      refresh();
      return out;
    }, function (err) {
      if (alertBox) { alertBox.textContent = err.message; alertBox.hidden = false; }
      else showAlert(err.message);
      refresh();
      throw err;
    });
  }

  // ---- rendering ----

  function render(st, asked) {
    state.csrf = st.csrf;
    state.pendingLimit = st.pendingLimit;
    if (st.now) state.skew = Date.parse(st.now) - Date.now();
    $('signin').hidden = true;
    $('app').hidden = false;

    var groups = { pending: [], reconcile: [], running: [] };
    (st.proposals || []).forEach(function (p) {
      if (p.status === 'pending') groups.pending.push(p);
      else if (p.needsReconciliation) groups.reconcile.push(p);
      else groups.running.push(p);
    });
    var seen = new Set();
    Object.keys(groups).forEach(function (g) {
      var list = groups[g];
      var nodes = list.map(function (p) { seen.add(p.previewId); return cardFor(p); });
      placeChildren($(g + '-cards'), nodes);
      $(g + '-count').textContent = String(list.length);
      if (g !== 'pending') $(g).hidden = list.length === 0;
    });
    selectable(groups.pending);
    var pendingTotal = typeof st.pendingTotal === 'number' ? st.pendingTotal : groups.pending.length;
    $('pending-count').textContent = String(pendingTotal);
    setTitle(pendingTotal);
    announceArrivals(groups.pending, st.now);
    $('pending-empty').hidden = pendingTotal > 0;
    renderPager(st, groups.pending.length, pendingTotal, asked);
    var runningShown = groups.reconcile.length + groups.running.length;
    moreNote('running-more', st.runningTotal > runningShown,
      'Showing ' + runningShown + ' of ' + st.runningTotal + ' approved or running proposals; they run one at a time. ' +
      '`fluxgit gateway list --status approved,executing` lists them all.');
    moreNote('history-more', st.historyTotal > (st.history || []).length,
      'The ' + (st.history || []).length + ' most recent of ' + st.historyTotal + ' decided proposals. ' +
      '`fluxgit gateway list` lists them all.');
    Array.from(cardNodes.keys()).forEach(function (id) { if (!seen.has(id)) cardNodes.delete(id); });

    renderRestore(st.restorePoints || [], st.restorePointsError);
    renderRestoreActions(st.restoreActions || []);
    renderHistory(st.history || []);
    tick();
  }

  // ---- approving several cards at once (issue 25) ----

  // needsConfirmation: a card whose review asks the person to type, tick
  // or acknowledge something is approved on its own, never in a batch.
  function needsConfirmation(p) {
    var r = (p.review || {}).requires || {};
    return !!(r.typeBranch || r.forcePush || (r.destructiveSteps && r.destructiveSteps.length));
  }

  // selectable gives each pending card that needs no confirmation a
  // "select" box (once per card node) and shows the Approve selected bar
  // when there is one.
  function selectable(pending) {
    var any = false;
    pending.forEach(function (p) {
      var card = document.querySelector('#pending-cards article.card[data-preview-id="' + CSS.escape(p.previewId) + '"]');
      if (!card || needsConfirmation(p)) return;
      any = true;
      if (card.querySelector('input.select')) return;
      var box = el('input', { type: 'checkbox', class: 'select', 'data-select': p.previewId, 'aria-label': 'Select ' + p.previewId });
      box.addEventListener('change', updateBatch);
      var head = card.querySelector('.card-head');
      head.insertBefore(el('label', { class: 'select-label', title: 'Select for Approve selected' }, box), head.firstChild);
    });
    $('batch').hidden = !any;
    updateBatch();
  }

  function selectedIds() {
    return Array.from(document.querySelectorAll('#pending-cards input.select:checked')).map(function (b) { return b.getAttribute('data-select'); });
  }

  function updateBatch() {
    var n = selectedIds().length;
    var btn = $('approve-selected');
    btn.disabled = n === 0 || state.batchBusy;
    btn.textContent = n > 0 ? 'Approve selected (' + n + ')' : 'Approve selected';
  }

  // approveSelected approves the ticked cards one after another, each with
  // the page's own session (cookie, CSRF token, same origin), as if its
  // Approve button were pressed; a refusal shows on its card and the rest
  // go on.
  function approveSelected() {
    var ids = selectedIds();
    if (!ids.length) return;
    state.batchBusy = true;
    updateBatch();
    ids.reduce(function (chain, id) {
      return chain.then(function () {
        var card = document.querySelector('#pending-cards article.card[data-preview-id="' + CSS.escape(id) + '"]');
        return post('/ui/api/proposals/' + encodeURIComponent(id) + '/approve', {}, card).catch(function () {});
      });
    }, Promise.resolve()).then(function () {
      state.batchBusy = false;
      updateBatch();
    });
  }

  // decider is who decided, as the history says it: a rule of the
  // person's policy is named as such.
  function decider(by) {
    if (!by) return '';
    if (by.indexOf('policy ') === 0) return 'approved by policy ' + by.slice(7);
    return 'by ' + by;
  }

  // renderPager says which pending proposals this page shows when it does
  // not show them all, and offers the pages before and after: nothing that
  // waits for the person is ever silently left out.
  function renderPager(st, shown, total, asked) {
    var offset = st.pendingOffset || 0;
    var limit = st.pendingLimit || shown;
    // The gateway moves the offset back when it is past the end (proposals
    // were decided meanwhile); a click made while this state was on its way
    // wins.
    if (state.pendingOffset === asked) state.pendingOffset = offset;
    var pager = $('pending-pager');
    pager.hidden = offset === 0 && shown >= total;
    if (pager.hidden) return;
    var from = shown ? offset + 1 : 0;
    var rest = total - shown;
    $('pending-shown').textContent = 'Showing ' + from + '–' + (offset + shown) + ' of ' + total +
      ' waiting, the ones expiring soonest first; ' + rest + (rest === 1 ? ' more is' : ' more are') + ' on other pages.';
    $('pending-prev').hidden = offset === 0;
    $('pending-next').hidden = offset + shown >= total;
    $('pending-next').textContent = 'Show the next ' + Math.min(limit, total - offset - shown);
    $('pending-prev').textContent = 'Show the previous ' + Math.min(limit, offset);
  }

  function moreNote(id, show, text) {
    var n = $(id);
    n.hidden = !show;
    if (show) n.textContent = text;
  }

  // placeChildren makes container hold exactly nodes, touching the DOM only
  // when something changed so typing in a card is not disturbed.
  function placeChildren(container, nodes) {
    var cur = Array.from(container.children);
    if (cur.length === nodes.length && cur.every(function (n, i) { return n === nodes[i]; })) return;
    container.replaceChildren.apply(container, nodes);
  }

  // cardFor reuses a card whose proposal has not changed, keeping what the
  // person typed or ticked in it.
  function cardFor(p) {
    var version = [p.status, p.updatedAt, p.needsReconciliation].join('|');
    var old = cardNodes.get(p.previewId);
    if (old && old.version === version) return old.node;
    var node = buildCard(p);
    cardNodes.set(p.previewId, { node: node, version: version });
    return node;
  }

  function field(label, value, mono) {
    if (value === undefined || value === null || value === '') return null;
    return [el('dt', { text: label }), el('dd', { class: mono ? 'mono' : null, text: String(value) })];
  }

  function buildCard(p) {
    var body = p.body || {};
    var review = p.review || {};
    var requires = review.requires || {};
    var card = el('article', {
      class: 'card risk-' + p.risk,
      'data-preview-id': p.previewId,
      'data-status': p.status,
      'data-op': p.operationType
    });

    var head = el('header', { class: 'card-head' },
      el('span', { class: 'badge op', text: p.operationType }),
      el('span', { class: 'badge risk', text: p.risk + ' risk' }),
      el('span', { class: 'badge status status-' + p.status, text: p.needsReconciliation ? 'interrupted' : p.status }),
      p.status === 'pending' ? el('span', { class: 'countdown', 'data-expires': p.expiresAt, text: '' }) : null
    );
    card.appendChild(head);
    card.appendChild(el('h3', { class: 'summary', text: p.summary || (p.operationType + ' in ' + p.repoPath) }));

    var meta = el('dl', { class: 'meta' },
      field('Agent', p.agentId, true),
      field('Repository', p.repoPath, true),
      field('Reason', p.reason),
      field('Requested', when(p.createdAt)),
      field('Proposal', p.previewId, true)
    );
    if (p.refs && p.refs.length) {
      meta.appendChild(el('dt', { text: 'Refs' }));
      meta.appendChild(el('dd', null, el('ul', { class: 'refs' }, p.refs.map(function (r) {
        return el('li', null, el('span', { class: 'mono', text: r.ref }), ' → ', el('span', { class: 'mono oid', title: r.commit, text: short(r.commit) }));
      }))));
    }
    card.appendChild(meta);

    if (review.warnings && review.warnings.length) {
      card.appendChild(el('ul', { class: 'warnings' }, review.warnings.map(function (w) { return el('li', { text: w }); })));
    }
    if (!p.review && p.status === 'pending') {
      card.appendChild(el('p', { class: 'warn', text: 'The gateway has no review of this proposal; check the details below carefully.' }));
    }

    var details = el('div', { class: 'details' });
    renderDetails(details, p.operationType, body, review, requires, p);
    card.appendChild(details);
    add(card, changesView(review, p));

    if (p.needsReconciliation) {
      card.appendChild(reconcilePanel(p, card));
    } else if (p.status === 'pending') {
      card.appendChild(decisionPanel(p, card, requires, body));
    } else {
      card.appendChild(el('p', { class: 'progress', text: p.status === 'executing' ? 'Running now…' : 'Approved; waiting for its turn to run.' }));
    }
    card.appendChild(el('div', { class: 'card-alert', role: 'alert', hidden: true }));
    return card;
  }

  function pathList(paths) {
    if (!Array.isArray(paths) || !paths.length) return null;
    var max = 200;
    var items = paths.slice(0, max).map(function (x) { return el('li', { class: 'mono', text: x }); });
    if (paths.length > max) items.push(el('li', { class: 'more', text: '… and ' + (paths.length - max) + ' more' }));
    return el('ul', { class: 'paths' }, items);
  }

  function patchPreview(text, truncated, p) {
    var wrap = el('div', { class: 'patch' });
    var pre = el('pre', { class: 'mono patch-text', text: text || '' });
    wrap.appendChild(pre);
    if (truncated && p) {
      var btn = el('button', { type: 'button', class: 'link', text: 'Show the whole patch' });
      btn.addEventListener('click', function () {
        btn.disabled = true;
        fetch('/ui/api/proposals/' + encodeURIComponent(p.previewId), { credentials: 'same-origin', cache: 'no-store' })
          .then(function (r) { return r.json(); })
          .then(function (full) {
            var b = full.body || {};
            pre.textContent = b.patchContent || pre.textContent;
            btn.remove();
          }, function () { btn.disabled = false; });
      });
      wrap.appendChild(el('p', { class: 'hint', text: 'Only the beginning of the patch is shown.' }, ' ', btn));
    }
    return wrap;
  }

  function mergeSummary(m) {
    if (!m) return null;
    var box = el('div', { class: 'merge' },
      el('p', null,
        el('span', { class: 'mono', text: m.source }), ' into ', el('span', { class: 'mono', text: m.target }), ': ',
        el('strong', { text: m.commits + (m.commits === 1 ? ' commit' : ' commits') }), ', ',
        m.filesChanged + (m.filesChanged === 1 ? ' file' : ' files') + ' changed, ',
        el('span', { class: 'ins', text: '+' + m.insertions }), ' ',
        el('span', { class: 'del', text: '−' + m.deletions }),
        m.fastForward ? ' (fast-forward)' : ''));
    if (m.log && m.log.length) {
      box.appendChild(el('ul', { class: 'log mono' }, m.log.map(function (l) { return el('li', { text: l }); })));
    }
    return box;
  }

  // changesView is what the operation changes, as the gateway computed it
  // from the repository (review.facts and review.sections): commits and
  // files, bounded, each file's diff inline or fetched on demand.
  function changesView(review, p) {
    var facts = review.facts || [], sections = review.sections || [];
    if (!facts.length && !sections.length) return null;
    var box = el('div', { class: 'changes' });
    if (facts.length) {
      box.appendChild(el('dl', { class: 'meta facts' }, facts.map(function (f) { return field(f.label, f.value); })));
    }
    sections.forEach(function (s, i) { box.appendChild(sectionView(s, i, p)); });
    return box;
  }

  function sectionView(s, i, p) {
    var files = s.files || [], commits = s.commits || [];
    var count = '';
    if (s.files) count = ' — ' + s.filesTotal + (s.filesTotal === 1 ? ' file, ' : ' files, ');
    else if (s.commits) count = ' — ' + s.commitsTotal + (s.commitsTotal === 1 ? ' commit' : ' commits');
    var head = el('h4', null, s.title, count,
      s.files ? el('span', { class: 'ins', text: '+' + (s.insertions || 0) }) : null, s.files ? ' ' : null,
      s.files ? el('span', { class: 'del', text: '−' + (s.deletions || 0) }) : null);
    var sec = el('section', { class: 'change', 'data-kind': s.kind }, head);
    if (s.note) sec.appendChild(el('p', { class: 'hint', text: s.note }));
    if (commits.length) {
      var items = commits.map(function (c) {
        return el('li', { class: 'commit' }, el('span', { class: 'mono oid', title: c.oid, text: short(c.oid) }), ' ',
          el('span', { class: 'subject', text: c.subject }), ' ', el('span', { class: 'muted', text: c.author + ', ' + when(c.date) }));
      });
      var moreC = (s.commitsTotal || 0) - commits.length;
      if (moreC > 0) items.push(el('li', { class: 'more', text: '… ' + moreC + ' more commit' + (moreC === 1 ? '' : 's') }));
      sec.appendChild(el('ul', { class: 'log' }, items));
    } else if (s.commits) {
      sec.appendChild(el('p', { class: 'muted', text: 'none' }));
    }
    if (files.length) {
      var list = el('ul', { class: 'files' }, files.map(function (f) { return fileView(f, s, i, p); }));
      var moreF = (s.filesTotal || 0) - files.length;
      if (moreF > 0) list.appendChild(el('li', { class: 'more', text: '… ' + moreF + ' more file' + (moreF === 1 ? '' : 's') + ' (not listed; the totals above include them)' }));
      sec.appendChild(list);
    }
    return sec;
  }

  function diffPre(text) {
    var pre = el('pre', { class: 'mono diff' });
    String(text || '').split('\n').forEach(function (l, n, all) {
      if (n === all.length - 1 && l === '') return;
      var cls = l.charAt(0) === '+' && l.indexOf('+++ ') !== 0 ? 'ins-line' : (l.charAt(0) === '-' && l.indexOf('--- ') !== 0 ? 'del-line' : (l.indexOf('@@') === 0 ? 'hunk' : null));
      pre.appendChild(el('span', { class: cls, text: l + '\n' }));
    });
    return pre;
  }

  function fileView(f, s, i, p) {
    var sum = el('summary', null, el('span', { class: 'badge fstat', text: f.status }), ' ', el('span', { class: 'mono', text: f.path }), ' ',
      el('span', { class: 'ins', text: '+' + f.insertions }), ' ', el('span', { class: 'del', text: '−' + f.deletions }),
      f.binary ? ' (binary)' : '');
    var det = el('details', { class: 'file', 'data-path': f.path }, sum);
    if (f.diff) {
      det.appendChild(diffPre(f.diff));
      if (f.diffTruncated) det.appendChild(loadButton('Show the whole diff', det, s, i, p, f));
    } else {
      det.appendChild(loadButton('Show the diff', det, s, i, p, f));
    }
    return el('li', null, det);
  }

  // loadButton fetches one file's diff through the page's authenticated
  // API (the session cookie), computed again by the gateway.
  function loadButton(text, det, s, i, p, f) {
    var btn = el('button', { type: 'button', class: 'link load-diff', text: text });
    btn.addEventListener('click', function () {
      btn.disabled = true;
      var url = '/ui/api/proposals/' + encodeURIComponent(p.previewId) + '/diff?section=' + i + '&path=' + encodeURIComponent(f.path);
      fetch(url, { credentials: 'same-origin', cache: 'no-store' })
        .then(function (r) { return r.json().then(function (b) { if (!r.ok) throw new Error(b.error || r.status); return b; }); })
        .then(function (v) {
          var old = det.querySelector('pre.diff');
          var pre = diffPre(v.diff);
          if (old) old.replaceWith(pre); else det.appendChild(pre);
          if (v.truncated) det.appendChild(el('p', { class: 'hint', text: 'Cut at ' + v.max + ' bytes.' }));
          btn.remove();
        }, function (err) {
          btn.disabled = false;
          det.appendChild(el('p', { class: 'warn', text: 'Could not load the diff: ' + err.message }));
        });
    });
    return btn;
  }

  function renderDetails(d, op, b, review, requires, p) {
    var dl = el('dl', { class: 'meta' });
    function kv(label, v, mono) { add(dl, field(label, v, mono)); }
    switch (op) {
      case 'merge':
        kv('Merge', (b.sourceRef || '?') + ' into ' + (b.targetRef || '?'), true);
        kv('Strategy', b.strategy);
        d.appendChild(dl);
        // The commits and files are in the review's sections (changesView).
        if (!(review.sections && review.sections.length)) add(d, mergeSummary(review.merge));
        return;
      case 'rebase':
        kv('Rebase', (b.currentRef || 'HEAD') + ' onto ' + (b.ontoRef || '?'), true);
        break;
      case 'discard':
        d.appendChild(el('p', { class: 'warn', text: 'Uncommitted changes in these paths are discarded (the gateway keeps them in a safety stash first).' }));
        add(d, pathList(b.paths));
        return;
      case 'reset':
        kv('Reset to', b.targetRef, true);
        kv('Mode', b.mode);
        break;
      case 'patch':
        kv('Apply to', b.applyToIndex ? 'index and work tree' : 'work tree');
        d.appendChild(dl);
        d.appendChild(patchPreview(b.patchContent, p.bodyTruncated, p));
        return;
      case 'plan':
        d.appendChild(planSteps(b.steps || [], requires, review, p));
        return;
      case 'worktree':
        kv('Branch', b.branch, true);
        kv('Path', review.worktreePath ? review.worktreePath + (b.path ? '' : ' (default location)') : (b.path || '(default location)'), true);
        break;
      case 'commit':
        kv('Stage', b.paths ? 'the listed paths' : (b.stageAll ? 'all changes' : 'what is already staged'));
        d.appendChild(dl);
        d.appendChild(el('pre', { class: 'mono message', text: b.message || '' }));
        add(d, pathList(b.paths));
        return;
      case 'push':
        kv('Remote', b.remote, true);
        kv('Branch', b.branch || '(current branch)', true);
        kv('Set upstream', b.setUpstream ? 'yes' : 'no');
        kv('Force with lease', b.forceWithLease ? 'yes' : 'no');
        break;
      case 'branch':
        kv('New branch', b.name, true);
        kv('Start point', b.startPoint || 'HEAD', true);
        kv('Check out', b.checkout ? 'yes' : 'no');
        break;
      case 'branchDelete':
        d.appendChild(verdictTable(review.verdicts, b.targets));
        return;
      case 'submodulePointer':
        kv('Direction', b.direction);
        kv('Parent', b.parentPath || '(top-level repository)', true);
        kv('Submodule', b.relativePath, true);
        kv('Expected recorded', b.expectedRecordedOid, true);
        kv('Expected checked out', b.expectedCheckedOutOid, true);
        d.appendChild(dl);
        if (b.message) d.appendChild(el('pre', { class: 'mono message', text: b.message }));
        return;
    }
    d.appendChild(dl);
  }

  function stepLabel(s) {
    switch (s.operationType) {
      case 'merge': return 'merge ' + (s.sourceRef || '?') + ' into ' + (s.targetRef || '?') + (s.strategy ? ' (' + s.strategy + ')' : '');
      case 'rebase': return 'rebase ' + (s.currentRef || 'HEAD') + ' onto ' + (s.ontoRef || '?');
      case 'discard': return 'discard ' + (s.paths || []).length + ' path(s)';
      case 'reset': return 'reset ' + (s.mode ? '--' + s.mode + ' ' : '') + 'to ' + (s.targetRef || '?');
      case 'patch': return 'apply a patch' + (s.applyToIndex ? ' to the index' : '');
    }
    return String(s.operationType);
  }

  function planSteps(steps, requires, review, p) {
    var destructive = new Set(requires.destructiveSteps || []);
    var ol = el('ol', { class: 'steps' });
    steps.forEach(function (s, i) {
      var li = el('li', { class: destructive.has(i) ? 'step destructive' : 'step' },
        el('span', { class: 'badge op', text: s.operationType }), ' ', el('span', { class: 'mono', text: stepLabel(s) }));
      if (s.operationType === 'discard') add(li, pathList(s.paths));
      if (s.operationType === 'patch') add(li, patchPreview(s.patchContent, false, null));
      if (destructive.has(i) && p.status === 'pending') {
        var box = el('input', { type: 'checkbox', name: 'step', value: String(i), class: 'confirm' });
        li.appendChild(el('label', { class: 'confirm-line' }, box, ' Step ' + (i + 1) + ' is destructive: allow it'));
      }
      ol.appendChild(li);
    });
    var wrap = el('div', { class: 'plan' }, el('p', { class: 'hint', text: 'The plan stops at the first step that fails.' }), ol);
    add(wrap, mergeSummary(review.merge));
    return wrap;
  }

  function verdictTable(verdicts, targets) {
    if (!verdicts || !verdicts.length) {
      var rows = [];
      (targets || []).forEach(function (t) {
        (t.branches || []).forEach(function (b) { rows.push({ repoPath: t.repoPath, branch: b, pending: true }); });
      });
      verdicts = rows;
    }
    var tbody = el('tbody', null, verdicts.map(function (v) {
      var verdict = v.pending ? 'unknown' : (v.delete ? 'delete' : 'keep');
      return el('tr', { 'data-verdict': verdict },
        el('td', { class: 'mono', text: v.repoPath }),
        el('td', { class: 'mono', text: v.branch }),
        el('td', null, el('span', { class: 'badge verdict verdict-' + verdict, text: verdict })),
        el('td', { text: v.reason || '' }),
        el('td', { class: 'mono oid', title: v.tipOid || '', text: short(v.tipOid) }));
    }));
    return el('table', { class: 'verdicts' },
      el('thead', null, el('tr', null, ['Repository', 'Branch', 'Verdict', 'Why', 'Tip'].map(function (h) { return el('th', { text: h }); }))),
      tbody);
  }

  function decisionPanel(p, card, requires, body) {
    var panel = el('div', { class: 'decide' });
    var gates = [];

    if (requires.typeBranch || (p.operationType === 'reset' && body.mode === 'hard')) {
      var want = requires.typeBranch || '';
      var input = el('input', { type: 'text', name: 'confirmBranch', autocomplete: 'off', spellcheck: 'false', class: 'mono' });
      panel.appendChild(el('div', { class: 'danger' },
        el('p', null, el('strong', { text: 'Hard reset. ' }), 'Uncommitted changes and commits after the target are lost from the branch. Type the branch name ',
          el('code', { text: want || '(unknown)' }), ' to confirm.'),
        input));
      gates.push(function () { return want !== '' && input.value === want; });
      input.addEventListener('input', update);
    }
    if (requires.forcePush || (p.operationType === 'push' && body.forceWithLease)) {
      var ack = el('input', { type: 'checkbox', name: 'forcePush', class: 'confirm' });
      panel.appendChild(el('div', { class: 'danger' },
        el('p', null, el('strong', { text: 'Force push. ' }), 'The remote branch is overwritten (with lease: only if it is still where this repository last saw it). Commits others pushed since may be lost.'),
        el('label', { class: 'confirm-line' }, ack, ' I understand the remote branch will be overwritten')));
      gates.push(function () { return ack.checked; });
      ack.addEventListener('change', update);
    }
    if (p.operationType === 'commit') {
      // Not a gate: the guard refuses at execution only when another
      // agent holds a committed file exclusively; this lets it through.
      var guard = el('input', { type: 'checkbox', name: 'overrideGuard', class: 'confirm' });
      panel.appendChild(el('div', null,
        el('label', { class: 'confirm-line' }, guard, ' Commit even if another agent holds one of these files exclusively (override the shift-roster guard)')));
    }
    (requires.destructiveSteps || []).forEach(function (i) {
      gates.push(function () {
        var box = card.querySelector('input[name="step"][value="' + Number(i) + '"]');
        return !!box && box.checked;
      });
    });
    card.addEventListener('change', function (e) { if (e.target && e.target.name === 'step') update(); });

    var reason = el('textarea', { name: 'reason', rows: '2', maxlength: '4096', placeholder: 'Reason for rejecting (the agent reads it)' });
    var approve = el('button', { type: 'button', class: 'approve', 'data-action': 'approve', text: 'Approve', disabled: true });
    var reject = el('button', { type: 'button', class: 'reject', 'data-action': 'reject', text: 'Reject', disabled: true });
    reason.addEventListener('input', update);

    function expired() { return Date.parse(p.expiresAt) - (Date.now() + state.skew) <= 0; }
    function update() {
      approve.disabled = card.classList.contains('busy') || expired() || !gates.every(function (g) { return g(); });
      reject.disabled = card.classList.contains('busy') || reason.value.trim() === '';
    }
    card.gate = update;

    approve.addEventListener('click', function () {
      var steps = Array.from(card.querySelectorAll('input[name="step"]:checked')).map(function (b) { return Number(b.value); });
      var typed = card.querySelector('input[name="confirmBranch"]');
      var force = card.querySelector('input[name="forcePush"]');
      var payload = {};
      if (typed) payload.typedBranch = typed.value;
      if (steps.length) payload.steps = steps;
      if (force) payload.forcePush = force.checked;
      var guardBox = card.querySelector('input[name="overrideGuard"]');
      if (guardBox && guardBox.checked) payload.overrideGuard = true;
      act(card, '/ui/api/proposals/' + encodeURIComponent(p.previewId) + '/approve', payload, update);
    });
    reject.addEventListener('click', function () {
      act(card, '/ui/api/proposals/' + encodeURIComponent(p.previewId) + '/reject', { reason: reason.value.trim() }, update);
    });

    panel.appendChild(el('label', { class: 'reason' }, el('span', { text: 'Reject with a reason' }), reason));
    panel.appendChild(el('div', { class: 'buttons' }, approve, reject));
    setTimeout(update, 0);
    return panel;
  }

  function act(card, url, payload, update) {
    card.classList.add('busy');
    update();
    post(url, payload, card).catch(function () {}).then(function () {
      card.classList.remove('busy');
      update();
    });
  }

  function reconcilePanel(p, card) {
    var note = el('textarea', { name: 'note', rows: '2', maxlength: '4096', placeholder: 'What you found in the repository (optional)' });
    var done = el('button', { type: 'button', class: 'approve', 'data-action': 'reconcile', 'data-as': 'completed', text: 'Mark completed' });
    var failed = el('button', { type: 'button', class: 'reject', 'data-action': 'reconcile', 'data-as': 'failed', text: 'Mark failed' });
    function update() { done.disabled = failed.disabled = card.classList.contains('busy'); }
    [done, failed].forEach(function (b) {
      b.addEventListener('click', function () {
        act(card, '/ui/api/proposals/' + encodeURIComponent(p.previewId) + '/reconcile',
          { as: b.getAttribute('data-as'), note: note.value.trim() }, update);
      });
    });
    return el('div', { class: 'banner' },
      el('p', null, el('strong', { text: 'The gateway stopped while this was running. ' }),
        'It is never run again by itself. Look at the repository, then record what really happened; the agent sees it with operation.status.'),
      el('label', { class: 'reason' }, el('span', { text: 'Note' }), note),
      el('div', { class: 'buttons' }, done, failed));
  }

  // sameAsLast reports whether a list's data is unchanged since it was last
  // drawn, so a refresh does not replace elements a person is about to click.
  var drawn = {};
  function sameAsLast(key, data) {
    var sig = JSON.stringify(data);
    if (drawn[key] === sig) return true;
    drawn[key] = sig;
    return false;
  }

  function renderRestore(points, err) {
    if (sameAsLast('restore', [points, err || ''])) return;
    var list = $('restore-list');
    var items = points.map(function (rp) {
      var li = el('li', { class: 'restore', 'data-repo': rp.repoPath },
        el('div', { class: 'rp-main' },
          el('span', { class: 'badge op', text: rp.operation }), ' ',
          el('span', { class: 'mono', text: rp.repoPath })),
        el('div', { class: 'rp-sub' },
          el('span', { class: 'mono', text: rp.branch || '(detached)' }), ' ',
          el('span', { class: 'mono oid', title: rp.before, text: short(rp.before) }), ' → ',
          el('span', { class: 'mono oid', title: rp.after, text: short(rp.after) })));
      var actions = el('div', { class: 'rp-actions' });
      if (rp.canUndo) {
        actions.appendChild(restoreButton(li, rp, 'undo', 'Undo',
          'Undo the ' + rp.operation + ' on ' + (rp.branch || '(detached)') + '? ' + undoHow(rp.operation) +
          (rp.depth > 1 ? ' (' + (rp.depth - 1) + ' older restore point(s) can be undone after it.)' : '')));
      } else {
        actions.appendChild(el('span', { class: 'muted why', 'data-why': 'undo', text: 'Cannot undo: ' + (rp.why || 'no restore point') }));
      }
      if (rp.redo) {
        if (rp.redo.canRedo) {
          actions.appendChild(restoreButton(li, rp, 'redo', 'Redo', 'Redo the ' + rp.redo.operation + ' undone last?'));
        } else {
          actions.appendChild(el('span', { class: 'muted why', 'data-why': 'redo', text: 'Cannot redo: ' + rp.redo.why }));
        }
      }
      li.appendChild(actions);
      li.appendChild(el('div', { class: 'card-alert', role: 'alert', hidden: true }));
      return li;
    });
    list.replaceChildren.apply(list, items);
    $('restore-empty').hidden = points.length > 0;
    if (err) $('restore-empty').textContent = 'Restore points could not be read: ' + err;
  }

  // undoHow says what an undo does to the work tree, before the person
  // confirms it.
  function undoHow(op) {
    if (op === 'commit') return 'The commit leaves the branch; its changes stay in the work tree, staged (git reset --soft).';
    if (op === 'discard') return 'The discarded changes come back from the safety stash, which is then dropped.';
    if (op === 'patch') return 'The patch is reversed (git apply -R).';
    return 'The branch moves back to where it was before (git reset --keep; it refuses rather than lose local changes).';
  }

  // restoreButton is an Undo or Redo button that asks first: a click shows
  // what will happen with a confirm and a cancel button in the page (no
  // window.confirm, which a headless browser cannot answer).
  function restoreButton(li, rp, action, label, question) {
    var wrap = el('span', { class: 'rp-' + action });
    var b = el('button', { type: 'button', class: 'undo', 'data-action': action, 'data-repo': rp.repoPath, text: label });
    var ask = el('span', { class: 'rp-confirm', hidden: true },
      el('span', { class: 'rp-question', text: question + ' ' }));
    var yes = el('button', { type: 'button', class: 'approve', 'data-action': 'confirm-' + action, 'data-repo': rp.repoPath, text: 'Yes, ' + action });
    var no = el('button', { type: 'button', class: 'link', 'data-action': 'cancel-' + action, text: 'Cancel' });
    ask.appendChild(yes);
    ask.appendChild(no);
    b.addEventListener('click', function () { b.hidden = true; ask.hidden = false; });
    no.addEventListener('click', function () { ask.hidden = true; b.hidden = false; });
    yes.addEventListener('click', function () {
      yes.disabled = true;
      post('/ui/api/' + action, { repoPath: rp.repoPath }, li).catch(function () { yes.disabled = false; });
    });
    wrap.appendChild(b);
    wrap.appendChild(ask);
    return wrap;
  }

  // renderRestoreActions lists the undo and redo entries of the history.
  function renderRestoreActions(acts) {
    if (sameAsLast('restore-actions', acts)) return;
    var list = $('restore-actions');
    list.replaceChildren.apply(list, acts.map(function (a) {
      return el('li', { class: 'hist restore-action', 'data-action': a.action, 'data-ok': a.ok ? 'true' : 'false', 'data-restore-id': a.restoreId || '' },
        el('div', { class: 'hist-head' },
          el('span', { class: 'badge status status-' + (a.ok ? 'completed' : 'failed'), text: a.action + (a.ok ? '' : ' refused') }),
          a.operation ? el('span', { class: 'badge op', text: a.operation }) : null,
          el('span', { class: 'mono', text: a.repoPath }),
          el('span', { class: 'muted', text: 'by ' + a.decidedBy + ' · ' + when(a.at) })),
        el('div', { class: 'hist-msg', text: a.message }));
    }));
    $('restore-actions').hidden = acts.length === 0;
  }

  // notUndoable says, on a completed push or branch deletion, what the
  // gateway cannot undo locally (it keeps no restore point for them).
  function notUndoable(p) {
    if (p.status !== 'completed') return '';
    if (p.operationType === 'push') return 'Cannot be undone here: the remote already has these commits; undoing a push needs another push, which an agent must propose.';
    if (p.operationType === 'branchDelete') return 'No Undo for a deletion: the local branch can be recreated at its tip (shown in the result); a remote branch is not touched by this and is not restored here.';
    return '';
  }

  function resultCommit(r) {
    if (!r) return '';
    return r.mergeCommit || r.commitSha || r.newHeadSha || (r.restorePoint && r.restorePoint.afterCommit) || '';
  }

  function renderHistory(items) {
    if (sameAsLast('history', items)) return;
    var list = $('history-list');
    list.replaceChildren.apply(list, items.map(function (p) {
      var r = p.result || {};
      var sha = resultCommit(p.result);
      var msg = r.message || p.rejectionReason || '';
      return el('li', { class: 'hist', 'data-preview-id': p.previewId, 'data-status': p.status },
        el('div', { class: 'hist-head' },
          el('span', { class: 'badge status status-' + p.status, text: p.status }),
          el('span', { class: 'badge op', text: p.operationType }),
          el('span', { class: 'mono', text: p.repoPath }),
          el('span', { class: 'muted' + (String(p.decidedBy || '').indexOf('policy ') === 0 ? ' by-policy' : ''), 'data-decided-by': p.decidedBy || null, text: (p.decidedBy ? decider(p.decidedBy) + ' · ' : '') + when(p.decidedAt || p.updatedAt) })),
        el('div', { class: 'hist-body' },
          el('span', { class: 'muted', text: p.agentId + ': ' }),
          el('span', { text: p.summary || p.reason })),
        msg ? el('div', { class: 'hist-msg', text: msg }) : null,
        notUndoable(p) ? el('div', { class: 'hist-msg not-undoable', text: notUndoable(p) }) : null,
        sha ? el('div', { class: 'hist-sha' }, 'commit ', el('span', { class: 'mono oid', title: sha, text: sha })) : null);
    }));
    $('history-empty').hidden = items.length > 0;
  }

  // tick refreshes every countdown once a second.
  function tick() {
    var now = Date.now() + state.skew;
    document.querySelectorAll('.countdown[data-expires]').forEach(function (c) {
      var left = Math.round((Date.parse(c.getAttribute('data-expires')) - now) / 1000);
      if (left <= 0) {
        c.textContent = 'expired';
        c.classList.add('over');
      } else {
        var m = Math.floor(left / 60), s = left % 60;
        c.textContent = m + ':' + (s < 10 ? '0' : '') + s + ' left';
        c.classList.toggle('soon', left <= 60);
      }
      var card = c.closest('article.card');
      if (card && card.gate) card.gate();
    });
  }

  // ---- hearing about proposals ----

  var baseTitle = 'FluxGit approvals';

  // setTitle puts the number of pending proposals (all of them, not only
  // this page's) in the tab's title, where a person sees it from another tab.
  function setTitle(n) {
    document.title = (n > 0 ? '(' + n + ') ' : '') + baseTitle;
  }

  function clip(s, n) {
    s = String(s || '').replace(/\s+/g, ' ').trim();
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function canNotify() { return typeof window.Notification === 'function'; }

  // setNotify shows what the browser allows: a button to ask while it has
  // not been asked, and what happened once it has.
  function setNotify() {
    var box = $('notify');
    if (!canNotify()) { box.hidden = true; return; }
    var perm = Notification.permission;
    box.hidden = false;
    box.setAttribute('data-state', perm);
    box.setAttribute('data-shown', String(heard.shown));
    box.setAttribute('data-last', heard.last);
    $('notify-ask').hidden = perm !== 'default';
    var text = '';
    if (perm === 'granted') text = 'Notifications on' + (heard.shown ? ' · ' + heard.shown + ' shown' : '');
    else if (perm === 'denied') text = 'Notifications are blocked; allow them in this site\'s browser settings';
    $('notify-text').textContent = text;
  }

  // askNotify runs on the person's click: browsers only ask for the
  // permission from a user gesture.
  function askNotify() {
    if (!canNotify()) return;
    var done = function () { setNotify(); };
    try {
      var r = Notification.requestPermission(done); // older browsers take a callback
      if (r && typeof r.then === 'function') r.then(done, done);
    } catch (e) { done(); }
  }

  // announceArrivals creates one browser notification for each pending
  // proposal that arrived since the page opened, once.
  function announceArrivals(pending, now) {
    if (heard.known === null) {
      heard.known = new Set(pending.map(function (p) { return p.previewId; }));
      heard.since = Date.parse(now) || 0;
      return;
    }
    pending.forEach(function (p) {
      if (heard.known.has(p.previewId)) return;
      heard.known.add(p.previewId);
      if ((Date.parse(p.createdAt) || 0) < heard.since) return;
      if (canNotify() && Notification.permission === 'granted') notifyOf(p);
    });
  }

  function notifyOf(p) {
    var n;
    try {
      n = new Notification('FluxGit: ' + clip(p.operationType, 32) + ' proposal', {
        body: clip(p.agentId, 64) + ' proposes ' + clip(p.operationType, 32) + ' in ' + clip(p.repoPath, 120) +
          (p.reason ? ': ' + clip(p.reason, 160) : ''),
        tag: 'fluxgit-' + p.previewId
      });
    } catch (e) { return; } // a browser that only notifies from service workers
    n.addEventListener('show', function () {
      heard.shown++;
      heard.last = p.previewId;
      setNotify();
    });
    n.addEventListener('click', function () {
      window.focus();
      var c = document.querySelector('article.card[data-preview-id="' + p.previewId + '"]');
      if (c) c.scrollIntoView({ block: 'center' });
      n.close();
    });
  }

  // ---- one card (operation.CardPath: /ui/p/<previewId>) ----

  // The card page shows one proposal: the one an agent's client asked the
  // person to look at. Its address carries no secret; without a session it
  // says the one command that signs this browser in and lands here.
  function showCardSignin(id, kind) {
    state.signedOut = true;
    $('app').hidden = true;
    $('card-view').hidden = true;
    $('card-signin-command').textContent = 'fluxgit gateway open ' + id;
    $('card-signin-show').textContent = 'fluxgit gateway show ' + id;
    if (kind === 'stale') {
      $('card-signin-why').textContent = 'That link is not valid for this gateway: it was printed by an earlier start, so nothing is shown here.';
    }
    $('card-signin').hidden = false;
    setLive('offline', 'no session');
    if (state.es) { state.es.close(); state.es = null; }
  }

  function outcomeText(p) {
    var r = p.result || {};
    switch (p.status) {
      case 'completed': return 'Done' + (resultCommit(r) ? ': commit ' + resultCommit(r) : '') + (r.message ? ' — ' + r.message : '');
      case 'rejected': return 'Rejected' + (p.rejectionReason ? ': ' + p.rejectionReason : '') + '. Nothing was changed.';
      case 'failed': return 'Approved, but the operation failed' + (r.message ? ': ' + r.message : '') + '.';
      case 'expired': return 'Expired before anyone decided. Nothing was changed.';
      case 'cancelled': return 'Cancelled by the agent before a decision. Nothing was changed.';
    }
    return '';
  }

  function refreshCard() {
    if (state.refreshing) { state.again = true; return; }
    state.refreshing = true;
    var id = state.card;
    fetch('/ui/api/card/' + encodeURIComponent(id), { credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        if (res.status === 403) { showCardSignin(id, 'none'); return null; }
        return res.json().then(function (body) {
          if (!res.ok) throw new Error(body && body.error ? body.error : 'HTTP ' + res.status);
          return body;
        });
      })
      .then(function (st) {
        if (!st) return;
        state.csrf = st.csrf;
        if (st.now) state.skew = Date.parse(st.now) - Date.now();
        var p = st.card;
        $('card-signin').hidden = true;
        $('card-view').hidden = false;
        var out = outcomeText(p);
        placeChildren($('card-cards'), out ? [] : [cardFor(p)]);
        $('card-outcome').textContent = out;
        $('card-outcome').setAttribute('data-status', p.status);
        $('card-outcome').hidden = !out;
        setTitle(p.status === 'pending' ? 1 : 0);
        tick();
      })
      .catch(function (err) { showAlert('Could not load the proposal: ' + err.message); })
      .then(function () {
        state.refreshing = false;
        if (state.again) { state.again = false; refreshCard(); }
      });
  }

  function start() {
    $('address').textContent = location.host;
    var cardId = document.body.getAttribute('data-card');
    if (cardId) {
      state.card = cardId;
      refresh = refreshCard; // decisions and live updates refresh the one card
      $('card-id').textContent = cardId;
      var cs = document.body.getAttribute('data-session');
      if (cs === 'none' || cs === 'stale') { showCardSignin(cardId, cs); return; }
      setInterval(tick, 1000);
      refresh();
      connect();
      return;
    }
    $('notify-ask').addEventListener('click', askNotify);
    $('approve-selected').addEventListener('click', approveSelected);
    setNotify();
    $('pending-next').addEventListener('click', function () {
      state.pendingOffset += Number(state.pendingLimit) || 50;
      refresh();
    });
    $('pending-prev').addEventListener('click', function () {
      state.pendingOffset = Math.max(0, state.pendingOffset - (Number(state.pendingLimit) || 50));
      refresh();
    });
    var session = document.body.getAttribute('data-session');
    if (session === 'none' || session === 'stale') { showSignin(session); return; }
    setInterval(tick, 1000);
    refresh();
    connect();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
