(function () {
  const rows = Array.from(document.querySelectorAll('tr.case'));
  const groups = Array.from(document.querySelectorAll('tr.group'));
  const panel = document.getElementById('panel');
  const shown = document.getElementById('shown');
  function apply() {
    const wanted = new Set(Array.from(document.querySelectorAll('input[name=outcome]:checked')).map(i => i.value));
    const capability = document.getElementById('capability').value;
    let count = 0;
    for (const row of rows) {
      const outcomes = row.dataset.outcomes.split(' ');
      const visible = (!capability || row.dataset.capability === capability) && outcomes.some(o => wanted.has(o));
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
  document.querySelectorAll('input[name=outcome], #capability').forEach(i => i.addEventListener('change', apply));
  document.querySelectorAll('td.cell[data-detail]').forEach(cell => {
    cell.addEventListener('click', () => open(cell));
    cell.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(cell); } });
  });
  apply();
  const first = document.querySelector('td.cell.failed, td.cell.errored, td.cell.fixed, td.cell.partial');
  if (first) open(first);
})();
