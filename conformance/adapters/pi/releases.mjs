// The pi releases the adapter installs, read from package.json: the plain package is the
// newest, each older release an alias "pi-agent-core-X". Oldest first.
import fs from "node:fs";

const deps = JSON.parse(fs.readFileSync(new URL("./package.json", import.meta.url), "utf8")).dependencies;
const parts = (v) => v.split(".").map(Number);
const older = (a, b) => parts(a).reduce((d, n, i) => d || n - parts(b)[i], 0);

/** The newest release, installed as the plain package. */
export const NEWEST = deps["@earendil-works/pi-agent-core"];
/** Every release installed, oldest first. */
export const RELEASES = Object.keys(deps)
	.filter((k) => k.startsWith("pi-agent-core-"))
	.map((k) => k.slice("pi-agent-core-".length))
	.concat(NEWEST)
	.sort(older);
