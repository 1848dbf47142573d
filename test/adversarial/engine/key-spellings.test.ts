/**
 * Class 4: Docker Engine API create bodies as the daemon decodes them (encoding/json into
 * container.CreateRequest, docker v28.5.2), with repeated keys and nulls. Checked with the engine-json oracle:
 * - `null` into a bool or string leaves it as it was: `"Privileged": true, "Privileged": null` is privileged,
 *   `"NetworkMode": "host", "NetworkMode": null` is host;
 * - `null` into the *HostConfig pointer, a slice or a map empties it: `"HostConfig": null` drops everything written
 *   before it, `"Binds": null` drops the binds;
 * - a second object for the same struct or map field is decoded into the first (merged): a later
 *   `"hostconfig": {"PortBindings": {}}` keeps the bindings already read;
 * - `\u0065` in a key is the letter e; a Cyrillic е (U+0435) does not fold to e, so `Privilеged` is an unknown key;
 * - `HostConfig` inside `HostConfig` is an unknown field of HostConfig;
 * - an unknown key is ignored by the claimed daemon but may be read by another, so it fails closed
 *   (sandbox-disallow-unjudged-fields).
 */
import { engineBody } from "../fixtures";
import { blocked, cases, passes } from "../harness";

/** The safe HostConfig's fields as JSON text, without braces, to splice repeated keys around. */
const SAFE_HC = engineBody()
  .replace(/^[\s\S]*"HostConfig": \{/, "")
  .replace(/\}\s*\}\s*$/, "")
  .trim();
const TOP = '"Image": "busybox:1.36", "Cmd": ["sh", "-c", "echo hello"], "User": "1000:1000"';
const body = (hostConfigText: string, extraTop = "") =>
  `{${TOP}${extraTop === "" ? "" : `, ${extraTop}`}, ${hostConfigText}}\n`;
const hc = (extra: string) => `"HostConfig": {${SAFE_HC}${extra === "" ? "" : `, ${extra}`}}`;

const priv = { "body.json": engineBody({}, { Privileged: true }) };
const P = blocked("sandbox-disallow-privileged");

cases("class 4: null and repeated keys in create bodies", [
  {
    name: '"Privileged": true then "Privileged": null (null leaves a bool as it was)',
    files: { "body.json": body(hc('"Privileged": true, "Privileged": null')) },
    plain: priv,
    want: P,
  },
  {
    name: '"NetworkMode": "host" then "NetworkMode": null',
    files: { "body.json": body(hc('"NetworkMode": "host", "NetworkMode": null')) },
    plain: { "body.json": engineBody({}, { NetworkMode: "host" }) },
    want: blocked(undefined),
  },
  {
    name: '"HostConfig": null then a privileged HostConfig',
    files: { "body.json": body(`"HostConfig": null, ${hc('"Privileged": true')}`) },
    plain: priv,
    want: P,
  },
  {
    name: 'a privileged HostConfig, then "HostConfig": null, then a safe one (null dropped the first): passes',
    files: { "body.json": body(`${hc('"Privileged": true')}, "HostConfig": null, ${hc("")}`) },
    want: passes,
  },
  {
    name: 'PortBindings, then "hostconfig": {"PortBindings": {}} (maps merge: the binding stays)',
    files: {
      "body.json": body(
        `${hc('"PortBindings": {"80/tcp": [{"HostPort": "8080"}]}').replace('"NetworkMode": "none"', '"NetworkMode": "bridge"')}, "hostconfig": {"PortBindings": {}}`,
      ),
    },
    plain: {
      "body.json": engineBody(
        {},
        { NetworkMode: "bridge", PortBindings: { "80/tcp": [{ HostPort: "8080" }] } },
      ),
    },
    want: blocked("sandbox-disallow-exposed-ports"),
  },
  {
    name: 'Binds with the socket, then "Binds": null (null empties a list): passes',
    files: { "body.json": body(hc('"Binds": ["/var/run/docker.sock:/s"], "Binds": null')) },
    want: passes,
  },
  {
    name: 'CapAdd [SYS_ADMIN], then "capadd": [] (a later list replaces): passes',
    files: { "body.json": body(hc('"CapAdd": ["SYS_ADMIN"], "capadd": []')) },
    want: passes,
  },
]);

cases("class 4: key spellings", [
  {
    name: 'key written with a JSON escape: "Privil\\u0065ged": true',
    files: { "body.json": body(hc('"Privil\\u0065ged": true')) },
    plain: priv,
    want: P,
  },
  {
    name: "Privilеged with a Cyrillic е (not folded by encoding/json, an unknown key): refused as a field outside the claimed API",
    files: { "body.json": body(hc('"Privil\u0435ged": true')) },
    want: blocked("sandbox-disallow-unjudged-fields"),
  },
  {
    name: "HostConfig nested inside HostConfig (an unknown field): refused as a field outside the claimed API",
    files: { "body.json": body(hc('"HostConfig": {"Privileged": true}')) },
    want: blocked("sandbox-disallow-unjudged-fields"),
  },
  {
    name: "Privileged under Config (Config has no such field here; top-level keys are the Config): refused as a field outside the claimed API",
    files: { "body.json": body(hc(""), '"Config": {"Privileged": true}') },
    want: blocked("sandbox-disallow-unjudged-fields"),
  },
]);
