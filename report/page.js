(function () {
  "use strict";
  var panel = document.getElementById("panel");
  var head = panel.querySelector(".ph span");
  var body = panel.querySelector("pre");
  var closed = false; // closed by the reader: hovering does not open it again until a click
  function show(td, clicked) {
    var pre = td.querySelector("details > pre");
    if (!pre) { return; }
    if (clicked) { closed = false; }
    if (closed) { return; }
    head.textContent = td.getAttribute("data-side") + " · entry " + td.getAttribute("data-seq") + " · " + td.getAttribute("data-lane");
    body.textContent = pre.textContent;
    panel.classList.add("on");
  }
  document.addEventListener("mouseover", function (ev) {
    var t = ev.target;
    var td = t && t.closest ? t.closest("td.txt[data-seq]") : null;
    if (td) { show(td); }
  });
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    var td = t && t.closest ? t.closest("td.txt[data-seq]") : null;
    if (td) { show(td, true); }
  });
  function close() { closed = true; panel.classList.remove("on"); }
  panel.querySelector(".close").addEventListener("click", close);

  // Rows where virtual time moves on get a rule above them.
  var rows = document.querySelectorAll("table.trace tbody tr");
  var last = {};
  for (var i = 0; i < rows.length; i++) {
    var cells = rows[i].querySelectorAll("td.t");
    for (var s = 0; s < cells.length; s++) {
      if (cells[s].textContent !== "") {
        if (last[s] !== undefined && rows[i].parentNode === rows[i - 1].parentNode) { rows[i].classList.add("t-new"); }
        last[s] = cells[s].textContent;
      }
    }
    if (i + 1 < rows.length && rows[i + 1].parentNode !== rows[i].parentNode) { last = {}; }
  }

  var fold = document.getElementById("fold");
  fold.addEventListener("change", function () { document.body.classList.toggle("fold", fold.checked); });

  // Stops: rows with a finding, and the first row of every run of differing rows.
  var stops = [];
  for (var j = 0; j < rows.length; j++) {
    var r = rows[j];
    var diffStart = r.classList.contains("diff") && !(j > 0 && rows[j - 1].classList.contains("diff"));
    if (r.classList.contains("find") || diffStart) { stops.push(r); }
  }
  var at = -1;
  function go(step) {
    if (stops.length === 0) { return; }
    at = (at + step + stops.length) % stops.length;
    var r = stops[at];
    if (document.body.classList.contains("fold") && r.hasAttribute("data-delta")) { fold.checked = false; document.body.classList.remove("fold"); }
    r.scrollIntoView({ block: "center" });
    r.classList.remove("flash");
    void r.offsetWidth;
    r.classList.add("flash");
    var td = r.querySelector("td.txt[data-seq]:last-of-type") || r.querySelector("td.txt[data-seq]");
    if (td) { show(td, true); }
  }
  document.getElementById("next").addEventListener("click", function () { go(1); });
  document.getElementById("prev").addEventListener("click", function () { go(-1); });
  document.addEventListener("keydown", function (ev) {
    if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "TEXTAREA")) { return; }
    if (ev.key === "n") { go(1); } else if (ev.key === "p") { go(-1); } else if (ev.key === "Escape") { close(); }
  });
  document.getElementById("next").disabled = stops.length === 0;
  document.getElementById("prev").disabled = stops.length === 0;
  document.documentElement.setAttribute("data-stops", String(stops.length));
  document.documentElement.setAttribute("data-ready", "1");
})();
