// The packet page's category balance: the "In this packet" counts follow the ticked questions.
(() => {
  "use strict";
  const form = document.getElementById("pk-form");
  if (!form) return;
  const recount = () => {
    const counts = {};
    for (const box of form.querySelectorAll('input[name="pick"]:checked')) {
      counts[box.dataset.category] = (counts[box.dataset.category] || 0) + 1;
    }
    for (const row of form.querySelectorAll("#pk-balance tbody tr")) {
      row.querySelector(".picked").textContent = String(counts[row.dataset.category] || 0);
    }
  };
  form.addEventListener("change", recount);
  recount();
})();
