/**
 * The user commands, on the user store the master (and the catalog) check tokens
 * against: `cluster add-user`, `list-users`, `remove-user`, `token` and
 * `service-token`. They open the store file (`--users-db`) directly (SQLite
 * serializes writers), so they run on the machine that holds it; `remove-user` locks
 * the user out of the master and the catalog at once.
 *
 * @module
 */
import { JWT_SECRET_SETTING, TOKEN_TTL_SETTING } from "../auth/settings.ts";
import { pathParser, setting } from "../internal/config.ts";
import { type Command, command } from "./command.ts";
import type { CliIo } from "./io.ts";
import { UsageError } from "./errors.ts";
import { loadModule } from "./lazy.ts";

const USERS_DB = setting({
  flag: "--users-db",
  env: "PERMAFROST_USERS_DB",
  parse: pathParser(),
  description: "The user store (SQLite file) the master and the catalog read",
});

/** Settings of the commands that change the store and sign tokens. */
const SIGNING = Object.freeze({
  usersDb: USERS_DB,
  jwtSecret: JWT_SECRET_SETTING,
  expiresIn: TOKEN_TTL_SETTING,
});

function secretNeeded(name: string, secret: string): void {
  if (secret === "") {
    throw new UsageError(
      `'${name}' signs tokens: set PERMAFROST_JWT_SECRET (or pass --jwt-secret)`,
    );
  }
}

async function withStore<T>(
  path: string,
  use: (store: import("../auth/store.ts").UserStore) => Promise<T>,
): Promise<T> {
  const { openSqliteUserStore } = await loadModule("sqliteUserStore");
  const store = openSqliteUserStore(path);
  try {
    return await use(store);
  } finally {
    store.close();
  }
}

/** `cluster add-user <name> --namespace NS [--can-freeze] [--can-thaw]`. */
export const addUser = command({
  name: "cluster add-user",
  summary: "Adds a user to the user store and prints a token for them (stdout).",
  usage: "<name>",
  args: { min: 1, max: 1 },
  settings: SIGNING,
  flags: [
    {
      name: "namespace",
      type: "string",
      value: "NS",
      help: "Their namespace: a directory under the data roots, or '*' for all (required)",
    },
    { name: "can-freeze", type: "boolean", help: "May submit jobs and register datasets" },
    { name: "can-thaw", type: "boolean", help: "May read data (/sql on the catalog)" },
  ],
  examples: [
    "PERMAFROST_USERS_DB=/srv/pf/users.db permafrost cluster add-user alice --can-freeze --namespace team-a",
  ],
  async run({ args, flags, settings }, io) {
    secretNeeded(this.name, settings.jwtSecret);
    if (flags.namespace === undefined) {
      throw new UsageError(
        "'cluster add-user' needs --namespace NS (a directory under the data roots, or '*' for all)",
      );
    }
    const { RBACManager } = await loadModule("rbac");
    return await withStore(settings.usersDb, async (store) => {
      const rbac = new RBACManager({ secret: settings.jwtSecret, store });
      const user = await rbac.addUser({
        name: args[0]!,
        can_freeze: flags["can-freeze"] === true,
        can_thaw: flags["can-thaw"] === true,
        namespace: String(flags.namespace),
      });
      io.out(await rbac.generateToken(user, { expiresIn: settings.expiresIn }));
      io.err(
        `added user ${user.name} (namespace ${user.namespace}${
          user.can_freeze ? ", can_freeze" : ""
        }${user.can_thaw ? ", can_thaw" : ""}); the token above is valid for ${settings.expiresIn}`,
      );
      return 0;
    });
  },
});

/** `cluster list-users`. */
export const listUsers = command({
  name: "cluster list-users",
  summary: "Lists the users of the user store (JSON on stdout).",
  usage: "",
  args: { min: 0, max: 0 },
  settings: { usersDb: USERS_DB },
  examples: ["permafrost cluster list-users --users-db /srv/pf/users.db"],
  async run({ settings }, io) {
    return await withStore(settings.usersDb, async (store) => {
      io.out(JSON.stringify(await store.list(), null, 2));
      return 0;
    });
  },
});

/** `cluster remove-user <name>`. */
export const removeUser = command({
  name: "cluster remove-user",
  summary: "Removes a user: their tokens stop working at the master and the catalog at once.",
  usage: "<name>",
  args: { min: 1, max: 1 },
  settings: { usersDb: USERS_DB },
  examples: ["permafrost cluster remove-user alice --users-db /srv/pf/users.db"],
  async run({ args, settings }, io) {
    const name = args[0]!;
    return await withStore(settings.usersDb, async (store) => {
      if (!(await store.remove(name))) {
        const { AuthError } = await loadModule("authErrors");
        throw new AuthError("USER_NOT_FOUND", `No user named '${name}'`);
      }
      io.err(`removed user ${name}; their tokens stop working at the master and the catalog`);
      return 0;
    });
  },
});

/** `cluster token <name>`. */
export const userToken = command({
  name: "cluster token",
  summary: "Prints a new token for an existing user (stdout).",
  usage: "<name>",
  args: { min: 1, max: 1 },
  settings: SIGNING,
  examples: ["permafrost cluster token alice --expires-in 8h"],
  async run({ args, settings }, io) {
    secretNeeded(this.name, settings.jwtSecret);
    const { RBACManager } = await loadModule("rbac");
    return await withStore(settings.usersDb, async (store) => {
      const rbac = new RBACManager({ secret: settings.jwtSecret, store });
      io.out(await rbac.generateToken(args[0]!, { expiresIn: settings.expiresIn }));
      return 0;
    });
  },
});

/** `cluster service-token [--name ID]`. */
export const serviceToken = command({
  name: "cluster service-token",
  summary: "Prints a cluster service token (what master and workers sign for each other).",
  usage: "",
  args: { min: 0, max: 0 },
  settings: { jwtSecret: JWT_SECRET_SETTING, expiresIn: TOKEN_TTL_SETTING },
  flags: [{ name: "name", type: "string", value: "ID", help: "Its name (default cluster)" }],
  examples: ["permafrost cluster service-token --name worker-7"],
  async run({ flags, settings }, io: CliIo) {
    secretNeeded(this.name, settings.jwtSecret);
    const { RBACManager } = await loadModule("rbac");
    const rbac = new RBACManager({ secret: settings.jwtSecret });
    const name = typeof flags.name === "string" ? flags.name : "cluster";
    io.out(await rbac.generateServiceToken(name, { expiresIn: settings.expiresIn }));
    return 0;
  },
});

/** Every user command. */
export const USER_COMMANDS: readonly Command[] = Object.freeze([
  addUser,
  listUsers,
  removeUser,
  userToken,
  serviceToken,
] as Command[]);
