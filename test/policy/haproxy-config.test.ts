/**
 * The broker's HAProxy configuration read as HAProxy reads it (quotes, escapes, comments, variables) and judged
 * against the generator's shape: the generator's own output passes, and a spelling HAProxy reads the same way as a
 * refused line is refused the same way.
 */
import { describe, expect, it } from "vitest";
import { brokerSpec, resolveProject } from "../../components/model";
import { brokerConfigProblem, readHaproxyConfig } from "../../policy/stack/haproxy-config";

const project = resolveProject({
  name: "demo",
  budget: { monthlyCapUsd: 100 },
  broker: {
    routes: {
      gh: {
        upstream: "https://api.example.com/v3",
        methods: ["GET", "POST"],
        paths: ["/repos/*/issues", "/user"],
        credential: { secret: "gh", prefix: "Bearer " },
        rateLimit: { requests: 10, perSeconds: 60 },
        maxResponseBytes: 100000,
      },
      maps: {
        upstream: "http://maps.example.com:8080",
        paths: ["/**"],
        credential: { secret: "maps", query: "key" },
      },
    },
  },
  templates: { a: { image: "x:1", broker: ["gh"] }, b: { image: "x:1", broker: ["gh", "maps"] } },
});
const generated = brokerSpec(project, "demo-net")?.config ?? "";

/** The generator's output with one line replaced (or a line added after it). */
function edit(find: string, replace: string): string {
  expect(generated).toContain(find);
  return generated.replace(find, replace);
}

describe("the broker's HAProxy configuration", () => {
  it("passes the generator's own configuration", () => {
    expect(generated).toContain("backend route_maps");
    expect(brokerConfigProblem(generated)).toBeUndefined();
  });

  it("reads words as HAProxy does: quotes, escapes and a comment", () => {
    const read = readHaproxyConfig(`global\n  "lua-load" '/x y.lua' a\\ b \\x41 # lua-load z\n`);
    expect("sections" in read && read.sections[1]?.lines.map((l) => l.words)).toEqual([
      ["global"],
      ["lua-load", "/x y.lua", "a b", "A"],
    ]);
  });

  it("refuses a keyword however it is spelled (quoted, escaped)", () => {
    for (const spelling of ['"option" http_proxy', "o'ption' http_proxy", "\\x6fption http_proxy"])
      expect(brokerConfigProblem(`${generated}\nbackend open\n  ${spelling}\n`)).toContain(
        "forwards a request",
      );
  });

  it("reads a variable only inside double quotes, and refuses one outside a route's credential", () => {
    const server = "server upstream 0.0.0.0:8080";
    expect(brokerConfigProblem(edit(server, `server upstream "\${UP}":8080`))).toContain(
      "uses the environment variable UP",
    );
    expect(brokerConfigProblem(edit(server, `server upstream '\${UP}':8080`))).toContain(
      "an address fixed in the file",
    );
  });

  it("refuses a commented-out deny: the deny of refused destinations must be right before set-dst", () => {
    const deny = "  http-request deny deny_status 403 if { var(txn.dst) -m ip";
    expect(brokerConfigProblem(edit(deny, `  #${deny.trim()}`))).toContain("is not right after a deny");
  });

  it("refuses a deny that leaves out a refused destination", () => {
    expect(brokerConfigProblem(edit(" 169.254.0.0/16", ""))).toContain("is not right after a deny");
  });

  it("refuses a second do-resolve of the destination variable in a frontend", () => {
    const fe = "  http-request set-var(txn.logpath) path";
    expect(
      brokerConfigProblem(edit(fe, `${fe}\n  http-request do-resolve(txn.dst,sandbox,ipv4) req.hdr(x-to)`)),
    ).toContain("sets txn.dst");
  });

  it("refuses setting the destination variable under another spelling (quoted, in a converter)", () => {
    const fe = "  http-request set-var(txn.logpath) path";
    for (const set of [
      `http-request "set-var('txn.dst')" req.hdr(x-to)`,
      "http-request set-header X %[req.hdr(x-to),set-var(txn.dst)]",
    ])
      expect(brokerConfigProblem(edit(fe, `${fe}\n  ${set}`))).toContain("sets txn.dst");
  });

  it("refuses an error page read from the credentials folder", () => {
    expect(
      brokerConfigProblem(
        edit("defaults\n", "defaults\n  errorfile 503 /run/secrets/sandbox-broker/SANDBOX_BROKER_CRED_GH\n"),
      ),
    ).toContain("credentials folder");
  });

  it("refuses a server state file, which loads servers' addresses", () => {
    expect(
      brokerConfigProblem(edit("global\n", "global\n  server-state-file /etc/sandbox-broker/s\n")),
    ).toContain("state file");
  });
});
