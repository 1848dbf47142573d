/**
 * What a `docker.Container` runs in or puts into the container besides its entry point: the healthcheck's command
 * line, and the files the provider uploads before it starts.
 */
import type { FileTextView, HookCommandView } from "../../workload";
import { healthcheckArgs } from "../docker/spellings";
import { carriesSecret, field, items, join, str, strList, type TaintCheck } from "../lenient";

/** The healthcheck's command line (`healthcheck.tests`), which the daemon runs inside the container. */
export function dockerHooks(props: unknown, tainted: TaintCheck): HookCommandView[] {
  const hc = field(props, "healthcheck");
  if (hc === undefined) return [];
  const args = healthcheckArgs(strList(field(hc, "tests")), "healthcheck.tests", tainted, carriesSecret);
  return args.length === 0 ? [] : [{ what: "healthcheck", args }];
}

/**
 * Files the provider copies into the container before it starts (`uploads[]`: `content`, or `contentBase64`
 * decoded; a `source` file on the deployer's machine cannot be read here).
 */
export function dockerUploads(props: unknown, tainted: TaintCheck): FileTextView[] {
  const out: FileTextView[] = [];
  items(field(props, "uploads")).forEach((u, i) => {
    const path = join("uploads", i);
    const file = str(field(u, "file"));
    const content = str(field(u, "content"));
    const b64 = str(field(u, "contentBase64"));
    for (const [key, v] of [
      ["content", content],
      ["contentBase64", typeof b64 === "string" ? Buffer.from(b64, "base64").toString("latin1") : b64],
    ] as const) {
      if (v === undefined) continue;
      const p = join(path, key);
      out.push({ file, content: v, tainted: tainted(p) || tainted(path) || carriesSecret(v), path: p });
    }
  });
  return out;
}
