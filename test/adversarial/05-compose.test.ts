/**
 * Class 5: Compose as `docker compose` loads it (compose-spec, compose-go v2): interpolation from the environment and
 * the project's .env (`${X:-d}`, `${X-d}`, `${X:?e}`, `$X`), `extends` (same file and other files), `include`, the
 * automatic compose.override.yaml merge with `!reset` / `!override`, file-backed secrets and configs (bind-mounted at
 * /run/secrets/<name>), env_file, volumes_from, uts, named volumes whose local driver binds a host path, the external
 * `host` network, and relative host paths resolved against the project folder.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are Compose interpolation, not template literals
import { compose } from "./fixtures";
import { blocked, cases } from "./harness";

const priv = { "compose.yaml": compose("app", "privileged: true") };
const sock = { "compose.yaml": compose("app", "volumes:\n  - /var/run/docker.sock:/var/run/docker.sock") };
const hostNet = { "compose.yaml": compose("app").replace("network_mode: none", "network_mode: host") };
const P = blocked("sandbox-disallow-privileged", "app");
const S = blocked("sandbox-disallow-runtime-socket", "app");

cases("class 5: interpolation", [
  {
    name: "privileged: ${PRIV:-true} (default when unset)",
    files: { "compose.yaml": compose("app", "privileged: ${PRIV:-true}") },
    plain: priv,
    want: P,
  },
  {
    name: "privileged: ${PRIV-true} (default when unset, dash form)",
    files: { "compose.yaml": compose("app", "privileged: ${PRIV-true}") },
    plain: priv,
    want: P,
  },
  {
    name: "privileged: $PRIV with PRIV=true in .env",
    files: { "compose.yaml": compose("app", "privileged: $PRIV"), ".env": "PRIV=true\n" },
    plain: priv,
    want: P,
  },
  {
    name: "privileged: ${PRIV:?required} with PRIV=yes in .env",
    files: { "compose.yaml": compose("app", "privileged: ${PRIV:?required}"), ".env": "PRIV=yes\n" },
    plain: priv,
    want: P,
  },
  {
    name: 'privileged: ${PRIV} with PRIV="true" quoted in .env',
    files: { "compose.yaml": compose("app", "privileged: ${PRIV}"), ".env": 'PRIV="true"\n' },
    plain: priv,
    want: P,
  },
  {
    name: "privileged: ${PRIV:-false} overridden by PRIV=true in .env",
    files: { "compose.yaml": compose("app", "privileged: ${PRIV:-false}"), ".env": "PRIV=true\n" },
    plain: priv,
    want: P,
  },
  {
    name: "volume source ${SOCK:-/var/run/docker.sock}",
    files: { "compose.yaml": compose("app", "volumes:\n  - ${SOCK:-/var/run/docker.sock}:/s") },
    plain: sock,
    want: S,
  },
  {
    name: "volume source ${RUN:-/var/run}/docker.sock",
    files: { "compose.yaml": compose("app", "volumes:\n  - ${RUN:-/var/run}/docker.sock:/s") },
    plain: sock,
    want: S,
  },
  {
    name: "volume source $DIR/docker.sock with DIR in .env (export prefix)",
    files: {
      "compose.yaml": compose("app", "volumes:\n  - $DIR/docker.sock:/s"),
      ".env": "export DIR=/var/run\n",
    },
    plain: sock,
    want: S,
  },
  {
    name: "network_mode: ${NM:-host}",
    files: { "compose.yaml": compose("app").replace("network_mode: none", "network_mode: ${NM:-host}") },
    plain: hostNet,
    want: blocked(undefined, "app"),
  },
  {
    name: "nested default ${A:-${B:-true}}",
    files: { "compose.yaml": compose("app", "privileged: ${A:-${B:-true}}") },
    plain: priv,
    want: P,
  },
]);

cases("class 5: extends, include, override files", [
  {
    name: "extends a service in another file (base.inc) that is privileged",
    files: {
      "compose.yaml": compose("app", "extends:\n  file: base.inc\n  service: base"),
      "base.inc": "services:\n  base:\n    image: busybox\n    privileged: true\n",
    },
    plain: priv,
    want: P,
  },
  {
    name: "extends a service of the same file (string form)",
    files: {
      "compose.yaml": `${compose("app", "extends: base")}  base:\n    image: busybox\n    privileged: true\n    profiles: [never]\n`,
    },
    plain: priv,
    want: P,
  },
  {
    name: "include of a file with another extension brings a privileged service",
    files: {
      "compose.yaml": `include:\n  - parts/db.inc\n${compose("app")}`,
      "parts/db.inc": "services:\n  db:\n    image: busybox\n    privileged: true\n",
    },
    plain: { "compose.yaml": compose("db", "privileged: true") },
    want: blocked("sandbox-disallow-privileged", "db"),
  },
  {
    name: "compose.override.yaml (loaded by default) adds privileged: true",
    files: {
      "compose.yaml": compose("app"),
      "compose.override.yaml": "services:\n  app:\n    privileged: true\n",
    },
    plain: priv,
    want: P,
  },
  {
    name: "compose.override.yaml resets cap_drop with !reset",
    files: {
      "compose.yaml": compose("app"),
      "compose.override.yaml": "services:\n  app:\n    cap_drop: !reset []\n",
    },
    plain: { "compose.yaml": compose("app").replace("cap_drop: [ALL]", "cap_drop: [CHOWN]") },
    want: blocked("sandbox-require-drop-net-admin", "app"),
  },
  {
    name: "compose.override.yaml replaces volumes with !override",
    files: {
      "compose.yaml": compose("app", "volumes:\n  - /srv/ro:/ro:ro"),
      "compose.override.yaml": "services:\n  app:\n    volumes: !override\n      - /var/run/docker.sock:/s\n",
    },
    plain: sock,
    want: S,
  },
  {
    name: "docker-compose.override.yml next to docker-compose.yml",
    files: {
      "docker-compose.yml": compose("app"),
      "docker-compose.override.yml": "services:\n  app:\n    privileged: true\n",
    },
    plain: priv,
    want: P,
  },
]);

cases("class 5: secrets, configs, env_file, volumes_from, namespaces, named volumes, networks, paths", [
  {
    name: "secret from file /var/run/docker.sock (bind-mounted at /run/secrets)",
    files: {
      "compose.yaml": compose(
        "app",
        "secrets: [engine]",
        "secrets:\n  engine:\n    file: /var/run/docker.sock",
      ),
    },
    plain: sock,
    want: blocked(undefined, "app"),
  },
  {
    name: "config from file /etc/shadow",
    files: {
      "compose.yaml": compose(
        "app",
        "configs:\n  - source: shadow\n    target: /shadow",
        "configs:\n  shadow:\n    file: /etc/shadow",
      ),
    },
    plain: { "compose.yaml": compose("app", "volumes:\n  - /etc/shadow:/shadow:ro") },
    want: blocked(undefined, "app"),
  },
  {
    name: "env_file with an AWS secret key",
    files: {
      "compose.yaml": compose("app", "env_file: [app.env]"),
      "app.env": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    },
    plain: {
      "compose.yaml": compose(
        "app",
        "environment:\n  AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      ),
    },
    want: blocked("sandbox-disallow-secret-env", "app"),
  },
  {
    name: "env_file long form (path, required) with a GitHub token",
    files: {
      "compose.yaml": compose("app", "env_file:\n  - path: ./secrets.env\n    required: true"),
      "secrets.env": "GH=ghp_0123456789abcdefghijABCDEFGHIJ012345\n",
    },
    plain: {
      "compose.yaml": compose("app", "environment:\n  - GH=ghp_0123456789abcdefghijABCDEFGHIJ012345"),
    },
    want: blocked("sandbox-disallow-secret-env", "app"),
  },
  {
    name: "volumes_from a service that mounts the Docker socket",
    files: {
      "compose.yaml": `${compose("app", "volumes_from: [helper]")}  helper:\n    image: busybox\n    volumes: [/var/run/docker.sock:/var/run/docker.sock]\n`,
    },
    plain: sock,
    want: blocked(undefined, "app"),
  },
  {
    name: "volumes_from an external container (container:legacy), unreadable",
    files: { "compose.yaml": compose("app", "volumes_from: ['container:legacy']") },
    plain: sock,
    want: blocked(undefined, "app"),
  },
  {
    name: "uts: host",
    files: { "compose.yaml": compose("app", "uts: host") },
    plain: { "compose.yaml": compose("app", "pid: host") },
    want: blocked("sandbox-disallow-host-namespaces", "app"),
  },
  {
    name: "named volume with local driver_opts binding /var/run",
    files: {
      "compose.yaml": compose(
        "app",
        "volumes: [run:/hostrun]",
        "volumes:\n  run:\n    driver: local\n    driver_opts:\n      type: none\n      o: bind\n      device: /var/run",
      ),
    },
    plain: { "compose.yaml": compose("app", "volumes: [/var/run:/hostrun]") },
    want: blocked("sandbox-disallow-runtime-socket", "app"),
  },
  {
    name: "named volume with driver_opts binding /etc (long syntax mount)",
    files: {
      "compose.yaml": compose(
        "app",
        "volumes:\n  - type: volume\n    source: etc\n    target: /e",
        "volumes:\n  etc:\n    driver_opts: {type: none, o: bind, device: /etc}",
      ),
    },
    plain: { "compose.yaml": compose("app", "volumes: [/etc:/e]") },
    want: blocked("sandbox-disallow-sensitive-host-mounts", "app"),
  },
  {
    name: "default network is the external host network",
    files: {
      "compose.yaml":
        compose("app").replace("    network_mode: none\n", "") +
        "networks:\n  default:\n    name: host\n    external: true\n",
    },
    plain: hostNet,
    want: blocked(undefined, "app"),
  },
  {
    name: "service joins a network declared external with name host",
    files: {
      "compose.yaml":
        compose("app", "networks: [hostnet]").replace("    network_mode: none\n", "") +
        "networks:\n  hostnet:\n    external: true\n    name: host\n",
    },
    plain: hostNet,
    want: blocked(undefined, "app"),
  },
  {
    name: "relative path climbing out of the project folder to /var/run/docker.sock",
    files: { "compose.yaml": compose("app", `volumes:\n  - .${"/..".repeat(24)}/var/run/docker.sock:/s`) },
    plain: sock,
    want: S,
  },
  {
    name: "long-syntax bind with source ./../../../../../../../../../../../../../../var/run",
    files: {
      "compose.yaml": compose(
        "app",
        `volumes:\n  - type: bind\n    source: ./${"../".repeat(24)}var/run\n    target: /r`,
      ),
    },
    plain: { "compose.yaml": compose("app", "volumes: [/var/run:/r]") },
    want: S,
  },
]);
