// The pages' reducer (frontend/static/frontend/match.js: modelFromSnapshot, applyEvent) passes the
// recorded streams (reducer_streams.json, written by `python -m tools.reducer_fixtures`): for every
// viewer, the model built from its first snapshot, with each event it receives applied, equals at
// every checkpoint the model built from the snapshot there. An event the reducer answers "resync"
// for (only RESYNC_EVENTS may be) makes the page ask for a fresh snapshot: the model continues from
// the next checkpoint, which the fixture places right after every command that emits one.
// Run by tests/contract/test_match_js.py: node --test tests/contract/match_reducer.test.mjs
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const root = new URL("../../", import.meta.url);
const { applyEvent, modelFromSnapshot } = await import(new URL("frontend/static/frontend/match.js", root));
const fixture = JSON.parse(readFileSync(new URL("tests/contract/reducer_streams.json", root), "utf8"));
const RESYNC_EVENTS = new Set(["ruling_undone", "ruling_corrected", "question_replaced", "ruling_reviewed", "buzz_added"]);

const copy = (value) => structuredClone(value);

for (const stream of fixture.streams) {
  for (const viewer of stream.viewers) {
    test(`${stream.name} as ${viewer.audience}`, () => {
      const receives = new Set(viewer.receives);
      const points = stream.checkpoints.filter((c) => viewer.audience in c.snapshots);
      let model = modelFromSnapshot(copy(points[0].snapshots[viewer.audience]));
      for (let i = 1; i < points.length; i++) {
        const [before, after] = [points[i - 1], points[i]];
        const events = stream.events.filter(
          (e) => e.seq > before.after_seq && e.seq <= after.after_seq && receives.has(e.audience),
        );
        let resync = null;
        for (const e of events) {
          if (applyEvent(model, e.event, copy(e.data)) === "resync") {
            assert.ok(RESYNC_EVENTS.has(e.event), `${after.label}: "resync" on ${e.event}`);
            resync = e.event;
            break;
          }
        }
        const want = modelFromSnapshot(copy(after.snapshots[viewer.audience]));
        if (resync === null) {
          assert.deepStrictEqual(model, want, `at "${after.label}" after ${events.map((e) => e.event).join(", ")}`);
        }
        model = resync === null ? model : want; // the fresh snapshot the page asked for
      }
    });
  }
}
