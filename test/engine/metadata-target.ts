/**
 * A server at the cloud metadata address, in a network namespace the test creates on this machine: a veth pair to
 * it, 169.254.169.254 on its side, and a host route to that one address through it, so that the host (and a pod,
 * through its gateway, where no policy stops it) reaches the server. Busybox's httpd answers `/latest/meta-data/`
 * with a token and logs every request; nothing leaves the machine. `stop()` removes the namespace, the pair and the
 * route.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const METADATA_IP = "169.254.169.254";

export interface MetadataTarget {
  /** What the server answers at `/latest/meta-data/`. */
  readonly token: string;
  /** The request lines the server has logged (one per request it answered), after its log has caught up. */
  requests(): Promise<string[]>;
  stop(): Promise<void>;
}

function ip(args: string[]): void {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ip ${args.join(" ")}: ${(r.stderr || r.stdout || "").trim()}`);
}

/**
 * What a target of a test that died left behind (its names are this helper's own): the namespace, the pair and the
 * route, which would stop a new one from taking the address.
 */
function removeLeftovers(): void {
  const list = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout ?? "";
  for (const name of list.split("\n").map((l) => l.split(" ")[0] ?? "")) {
    if (/^sbx-meta-[0-9a-f]{6}$/.test(name)) spawnSync("ip", ["netns", "del", name]);
  }
  const links = spawnSync("ip", ["-o", "link", "show"], { encoding: "utf8" }).stdout ?? "";
  for (const m of links.matchAll(/^\d+: (smh[0-9a-f]{6})[@:]/gm))
    spawnSync("ip", ["link", "del", m[1] ?? ""]);
  const routes = spawnSync("ip", ["route", "show", `${METADATA_IP}/32`], { encoding: "utf8" }).stdout ?? "";
  if (/dev smh[0-9a-f]{6}/.test(routes)) spawnSync("ip", ["route", "del", `${METADATA_IP}/32`]);
}

/** Starts the target (needs root and the `ip` tool, as the test node does). */
export async function startMetadataTarget(): Promise<MetadataTarget> {
  const tag = randomBytes(3).toString("hex");
  const ns = `sbx-meta-${tag}`;
  const [hostEnd, nsEnd] = [`smh${tag}`, `smn${tag}`];
  const www = mkdtempSync(join(tmpdir(), "sandbox-metadata-"));
  const token = `metadata-${randomBytes(6).toString("hex")}`;
  mkdirSync(join(www, "latest", "meta-data"), { recursive: true });
  writeFileSync(join(www, "latest", "meta-data", "index.html"), `${token}\n`);
  const log: string[] = [];
  let server: ChildProcess | undefined;
  const stop = async () => {
    server?.kill("SIGKILL");
    spawnSync("ip", ["route", "del", `${METADATA_IP}/32`, "dev", hostEnd]);
    spawnSync("ip", ["link", "del", hostEnd]);
    spawnSync("ip", ["netns", "del", ns]);
    rmSync(www, { recursive: true, force: true });
  };
  try {
    removeLeftovers();
    ip(["netns", "add", ns]);
    ip(["link", "add", hostEnd, "type", "veth", "peer", "name", nsEnd]);
    ip(["link", "set", nsEnd, "netns", ns]);
    ip(["link", "set", hostEnd, "up"]);
    ip(["netns", "exec", ns, "ip", "link", "set", "lo", "up"]);
    ip(["netns", "exec", ns, "ip", "addr", "add", `${METADATA_IP}/32`, "dev", nsEnd]);
    ip(["netns", "exec", ns, "ip", "link", "set", nsEnd, "up"]);
    // Answers go back the way requests came: everything through the pair.
    ip(["netns", "exec", ns, "ip", "route", "add", "default", "dev", nsEnd]);
    ip(["route", "add", `${METADATA_IP}/32`, "dev", hostEnd]);
    server = spawn("ip", ["netns", "exec", ns, "busybox", "httpd", "-f", "-vv", "-p", "80", "-h", www], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    server.stderr?.on("data", (b: Buffer) => {
      for (const line of b.toString("utf8").split("\n")) if (/url:/.test(line)) log.push(line.trim());
    });
    // Ready once it accepts a connection on its own side (no request: nothing logged).
    for (let i = 0; i < 50; i++) {
      const r = spawnSync("ip", ["netns", "exec", ns, "busybox", "nc", "-w", "1", METADATA_IP, "80"], {
        input: "",
      });
      if (r.status === 0) break;
      await new Promise((res) => setTimeout(res, 100));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    token,
    requests: async () => {
      await new Promise((res) => setTimeout(res, 500));
      return [...log];
    },
    stop,
  };
}
