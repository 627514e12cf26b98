// Click a header of a `table.sortable` to sort by that column (cells may carry data-value).
// Sorting is natural: numbers as numbers, and text with digit runs
// compared by value ("q2" before "q10", "Alex 9" before "Alex 10"); empty values last.
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

export function compareNatural(x, y) {
  if (x === "" || y === "") return x === y ? 0 : x === "" ? 1 : -1;
  const a = Number(x), b = Number(y);
  if (!Number.isNaN(a) && !Number.isNaN(b)) return a - b;
  return collator.compare(x, y);
}

for (const table of document.querySelectorAll("table.sortable")) {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, col) => {
    th.tabIndex = 0;
    const sort = () => {
      const dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", dir);
      const key = (row) => {
        const cell = row.cells[col];
        return (cell.dataset.value ?? cell.textContent).trim();
      };
      const body = table.tBodies[0];
      const sign = dir === "ascending" ? 1 : -1;
      const rows = [...body.rows].map((row) => [key(row), row]);
      rows.sort(([x], [y]) => {
        if (x === "" || y === "") return compareNatural(x, y); // empty last either way
        return sign * compareNatural(x, y);
      });
      body.append(...rows.map(([, row]) => row));
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (ev) => { if (ev.key === "Enter") sort(); });
  });
}
