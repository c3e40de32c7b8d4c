(function () {
  const rows = Array.from(document.querySelectorAll('tr.case'));
  const groups = Array.from(document.querySelectorAll('tr.group'));
  const panel = document.getElementById('panel');
  const shown = document.getElementById('shown');
  const changed = document.getElementById('changed');  // only with two reports or more
  function apply() {
    const wanted = new Set(Array.from(document.querySelectorAll('input[name=outcome]:checked')).map(i => i.value));
    const capability = document.getElementById('capability').value;
    const onlyChanged = changed !== null && changed.checked;
    let count = 0;
    for (const row of rows) {
      const outcomes = row.dataset.outcomes.split(' ');
      const visible = (!capability || row.dataset.capability === capability) && outcomes.some(o => wanted.has(o))
        && (!onlyChanged || row.hasAttribute('data-changed'));
      row.classList.toggle('hidden', !visible);
      if (visible) count += 1;
    }
    for (const group of groups) {
      const any = rows.some(r => r.dataset.capability === group.dataset.capability && !r.classList.contains('hidden'));
      group.classList.toggle('hidden', !any);
    }
    shown.textContent = count + ' of ' + rows.length + ' scenarios shown';
  }
  function open(cell) {
    const detail = document.getElementById(cell.dataset.detail);
    if (!detail) return;
    document.querySelectorAll('td.chosen').forEach(c => c.classList.remove('chosen'));
    cell.classList.add('chosen');
    panel.innerHTML = detail.innerHTML;  // escaped by turngate when the file was written
  }
  function choose(cell) {  // a cell the reader picked: its link becomes the page's address
    open(cell);
    if (window.location.hash !== '#' + cell.id) history.replaceState(null, '', '#' + cell.id);
  }
  function linked() {  // the cell the address names (#r1/codex/<scenario id>), if any
    const fragment = window.location.hash.slice(1);
    if (!fragment) return null;
    let cell = document.getElementById(fragment);
    if (!cell) {
      try { cell = document.getElementById(encodeURI(decodeURIComponent(fragment))); } catch (e) { cell = null; }
    }
    return cell && cell.matches('td.cell[data-detail]') ? cell : null;
  }
  function openLinked() {
    const cell = linked();
    if (!cell) return false;
    const row = cell.parentElement;
    if (row.classList.contains('hidden')) {  // a filter hides it: show every row again
      document.querySelectorAll('input[name=outcome]').forEach(i => { i.checked = true; });
      document.getElementById('capability').value = '';
      if (changed !== null) changed.checked = false;
      apply();
    }
    open(cell);
    cell.scrollIntoView({block: 'center', inline: 'center'});
    cell.focus({preventScroll: true});
    return true;
  }
  document.querySelectorAll('input[name=outcome], #capability, #changed').forEach(i => i.addEventListener('change', apply));
  document.querySelectorAll('td.cell[data-detail]').forEach(cell => {
    cell.addEventListener('click', () => choose(cell));
    cell.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); choose(cell); } });
  });
  window.addEventListener('hashchange', openLinked);
  apply();
  // A link names its cell; else the first cell that failed (failed, errored, unreached; fixed against a
  // baseline), and only when none did, the first partial one.
  if (!openLinked()) {
    const first = document.querySelector('td.cell.fails:not(.partial)') || document.querySelector('td.cell.partial');
    if (first) open(first);
  }
})();
