/**
 * The verdict of every key of a Compose file's top level and of each project definition a service uses (networks,
 * volumes, secrets, configs), and of `include` and `models` entries, as the Compose schema the project claims defines
 * them (schema.generated.ts). A refused key that a definition sets is a finding of sandbox-disallow-unjudged-fields
 * on every service that uses the definition (definitions.ts); the conformance test walks the generated table.
 *
 * A judged verdict's hostile value is a fragment of a file: `top` merged into the file's top level, `service` into a
 * hardened service.
 */
import { RULES } from "../rule-ids";
import { inert, judged, refused, type VerdictTable } from "../verdict";

const R = RULES;
const SWARM = "read by Swarm only: docker compose ignores it for a local project";
const META = "metadata on the engine's object";

/** Network drivers the readers judge: the local bridge, none, and host (host networking, judged). */
const NETWORK_DRIVERS = new Set(["bridge", "none", "null", "host"]);

/** The top-level keys. */
export const COMPOSE_TOP_VERDICTS: VerdictTable = {
  services: judged([R.privileged], { service: { privileged: true } }),
  jobs: judged([R.privileged], {
    top: {
      jobs: {
        j: {
          image: "busybox:1.36",
          user: "1000:1000",
          read_only: true,
          cap_drop: ["ALL"],
          network_mode: "none",
          privileged: true,
        },
      },
    },
  }),
  networks: judged([R.namespaces], {
    top: { networks: { n: { driver: "host" } } },
    service: { network_mode: null, networks: ["n"] },
  }),
  volumes: judged([R.socket], {
    top: { volumes: { hostrun: { driver_opts: { type: "none", o: "bind", device: "/var/run" } } } },
    service: { volumes: ["hostrun:/host"] },
  }),
  secrets: judged([R.secrets], {
    top: { secrets: { token: { file: "./token.txt" } } },
    service: { secrets: ["token"] },
  }),
  configs: judged([R.hostMounts], {
    top: { configs: { hostkeys: { file: "/etc/ssh/ssh_host_rsa_key" } } },
    service: { configs: ["hostkeys"] },
  }),
  include: inert(
    "the loader reads each included file as Compose does, and its services are judged as this file's",
  ),
  models: inert(
    "a model is served by the host's model runner only to services that name it, and a service's `models` is refused",
  ),
  name: inert("the project's name, a prefix of its objects' names"),
  version: inert("obsolete: compose-go reads nothing from it"),
};

/** Each definition's keys, by the schema's definition name. */
export const COMPOSE_DEFINITION_VERDICTS: Readonly<Record<string, VerdictTable>> = {
  network: {
    attachable: inert("lets other containers join an overlay network; it opens nothing of this service"),
    driver: refused(
      "a driver other than bridge gives the containers addresses on the host's network (macvlan, ipvlan), spans machines (overlay) or is a plugin the rules cannot read",
      (v) => typeof v === "string" && NETWORK_DRIVERS.has(v.trim().toLowerCase()),
    ),
    // Compose creates the network with these options: those that reach the host fail closed on the services that
    // join it (networkOptionFields in project.ts, by policy/sources/docker/bridge.ts).
    driver_opts: judged([R.unjudged], {
      top: { networks: { n: { driver_opts: { "com.docker.network.bridge.gateway_mode_ipv4": "routed" } } } },
      service: { network_mode: null, networks: ["n"] },
    }),
    enable_ipv4: inert("whether the network has IPv4 addresses"),
    enable_ipv6: inert("whether the network has IPv6 addresses"),
    external: judged([R.namespaces], {
      top: { networks: { host: { external: true } } },
      service: { network_mode: null, networks: ["host"] },
    }),
    "external.name": inert(
      "the old spelling of an external network's name, which the loader reads as `name`",
    ),
    internal: inert("no route off the host: it can only tighten"),
    ipam: inert("the network's address ranges"),
    "ipam.config": inert("the network's address ranges"),
    "ipam.config[].aux_addresses": inert("addresses the IPAM driver keeps back"),
    "ipam.config[].gateway": inert("the bridge's own address"),
    "ipam.config[].ip_range": inert("the range containers take addresses from"),
    "ipam.config[].subnet": inert("the network's subnet"),
    "ipam.driver": refused(
      "an IPAM driver other than the default is a plugin that hands out addresses the rules cannot see",
      (v) => typeof v === "string" && ["", "default"].includes(v.trim().toLowerCase()),
    ),
    "ipam.options": inert("options of the IPAM driver, which is the default one (any other is refused)"),
    labels: inert(META),
    name: judged([R.namespaces], {
      top: { networks: { n: { name: "host", external: true } } },
      service: { network_mode: null, networks: ["n"] },
    }),
  },
  volume: {
    driver: judged([R.hostMounts], {
      top: { volumes: { hostrun: { driver: "local-persist", driver_opts: { mountpoint: "/etc" } } } },
      service: { volumes: ["hostrun:/data"] },
    }),
    driver_opts: judged([R.socket], {
      top: { volumes: { hostrun: { driver_opts: { type: "none", o: "bind", device: "/var/run" } } } },
      service: { volumes: ["hostrun:/host"] },
    }),
    external: inert(
      "a volume the engine already has, mounted as a volume: the file names no host path with it (see policy/README.md)",
    ),
    "external.name": inert("the old spelling of an external volume's name"),
    labels: inert(META),
    name: inert("the engine's name of the volume"),
  },
  secret: {
    driver: inert(SWARM),
    driver_opts: inert(SWARM),
    environment: judged([R.secrets], {
      top: { secrets: { token: { environment: "HOME" } } },
      service: { secrets: ["token"] },
    }),
    external: inert(
      "a Swarm secret: docker compose mounts it like any other, and every secret mount is judged",
    ),
    "external.name": inert("the old spelling of an external secret's name"),
    file: judged([R.secrets], {
      top: { secrets: { token: { file: "./token.txt" } } },
      service: { secrets: ["token"] },
    }),
    labels: inert(META),
    name: inert("the engine's name of the secret"),
    template_driver: inert(SWARM),
  },
  config: {
    content: judged([R.secrets], {
      top: { configs: { c: { content: "OPENAI_API_KEY=sk-proj-0123456789abcdefghijklmnop" } } },
      service: { configs: ["c"] },
    }),
    environment: judged([R.secrets], {
      top: { configs: { c: { environment: "AWS_SECRET_ACCESS_KEY" } } },
      service: { configs: ["c"] },
    }),
    external: inert(
      "a Swarm config: docker compose mounts it like any other, and every config mount is judged",
    ),
    "external.name": inert("the old spelling of an external config's name"),
    file: judged([R.hostMounts], {
      top: { configs: { c: { file: "/etc/ssh/ssh_host_rsa_key" } } },
      service: { configs: ["c"] },
    }),
    labels: inert(META),
    name: inert("the engine's name of the config"),
    template_driver: inert(SWARM),
  },
  include: {
    env_file: inert("values for interpolating the included file, which the loader reads as Compose does"),
    path: inert("the files the loader reads; their services are judged as this file's"),
    project_directory: inert(
      "the folder the included file's relative paths are read from, which the loader honours",
    ),
  },
  model: {
    context_size: inert(
      "a setting of the host's model runner, which serves only services whose `models` is refused",
    ),
    model: inert(
      "a setting of the host's model runner, which serves only services whose `models` is refused",
    ),
    name: inert("a setting of the host's model runner, which serves only services whose `models` is refused"),
    runtime_flags: inert(
      "a setting of the host's model runner, which serves only services whose `models` is refused",
    ),
  },
};
