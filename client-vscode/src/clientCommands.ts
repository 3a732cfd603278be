/** The commands this extension contributes (see package.json): registered by commands.ts, and left out of the
 * server's registration by server.ts (a command registered twice is an error). Its own module, so neither of
 * those imports the other. */
export const CLIENT_COMMANDS = [
  'gradguard.restart',
  'gradguard.showLogs',
  'gradguard.fixAll',
  'gradguard.fixAllUnsafe',
  'gradguard.showRuleDocs',
  'gradguard.explainTraceback',
  'gradguard.runTrace',
];
