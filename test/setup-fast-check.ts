// Property tests run with one fixed seed, so a run of the suite is reproducible (CI lands or not on the code, not on
// luck); `FC_SEED=<n>` or `FC_SEED=random` explores other cases, and a failure prints the seed that reproduces it.
import fc from "fast-check";

const given = process.env.FC_SEED;
if (given !== "random") fc.configureGlobal({ seed: given === undefined ? 20261201 : Number(given) });
