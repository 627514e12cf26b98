// The "new match" form: add and remove team and bot rows (the server reads the lists), and
// highlight the explanation of the chosen rules preset.
const teamRows = document.getElementById("team-rows");
const botRows = document.getElementById("bot-rows");

document.getElementById("add-team").addEventListener("click", () => {
  const row = document.createElement("div");
  row.className = "row";
  row.innerHTML = '<input name="team" maxlength="100" aria-label="Team name"><button type="button" class="remove" aria-label="Remove">✕</button>';
  teamRows.append(row);
  row.querySelector("input").value = `Team ${String.fromCharCode(64 + teamRows.children.length)}`;
});

document.getElementById("add-bot").addEventListener("click", () => {
  botRows.append(document.getElementById("bot-row").content.cloneNode(true));
});

document.getElementById("create-form").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button.remove");
  if (btn) btn.closest(".row").remove();
});

const preset = document.getElementById("id_preset");
function showPreset() {
  for (const row of document.querySelectorAll("#preset-list [data-preset]")) {
    row.classList.toggle("chosen", row.dataset.preset === preset.value);
  }
}
if (preset) {
  preset.addEventListener("change", showPreset);
  showPreset();
}
