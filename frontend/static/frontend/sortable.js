// Click a header of a `table.sortable` to sort by that column (cells may carry data-value;
// th data-type="num" sorts numerically, empty values last).
for (const table of document.querySelectorAll("table.sortable")) {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, col) => {
    th.tabIndex = 0;
    const sort = () => {
      const dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", dir);
      const numeric = th.dataset.type === "num";
      const key = (row) => {
        const cell = row.cells[col];
        const raw = cell.dataset.value ?? cell.textContent.trim();
        return numeric ? (raw === "" || Number.isNaN(Number(raw)) ? null : Number(raw)) : raw.toLowerCase();
      };
      const body = table.tBodies[0];
      const rows = [...body.rows];
      const sign = dir === "ascending" ? 1 : -1;
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
        return x < y ? -sign : x > y ? sign : 0;
      });
      body.append(...rows);
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (ev) => { if (ev.key === "Enter") sort(); });
  });
}
