// src/hub/types.ts, a hand copy of the hub's wire types, checked against the snapshots of the Rust types
// (protocol/tests/snapshots/types, one realistic JSON example per type, each decoded by the Rust tests):
// the TypeScript compiler type-checks every snapshot the extension reads against the type it is read as
// (a field missing, misnamed or of another type fails), and every type the extension sends names only
// fields the Rust type has. A new wire type fails here until it is given its TypeScript type or said unused.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

/** editors/vscode: the tests run from dist/test/unit. */
const extension = path.resolve(__dirname, '../../..');
const snapshots = path.resolve(extension, '../../protocol/tests/snapshots');

/** How the extension uses each Rust wire type (by its snapshot's name); `T.` is src/hub/types.ts. */
type Use = { reads: string } | { sends: string } | { unused: string };

const USES: Record<string, Use> = {
  Hello: { sends: 'T.HelloParams' },
  HelloReply: { reads: 'T.HelloResult' },
  NoParams: { unused: 'methods without params are sent without them' },
  SelectionGetResult: { sends: 'T.Selection' },
  FocusParams: { sends: 'T.FocusParams' },
  SelectionChangedParams: { sends: 'T.SelectionChangedParams' },
  ReviewGetParams: { sends: 'T.ReviewGetParams' },
  ReviewGetResult: { reads: '{ reviews: T.Review[] }' },
  ReviewHistoryParams: { sends: 'T.ReviewHistoryParams' },
  ReviewHistoryResult: { reads: '{ revisions: T.ReviewRevision[] }' },
  ReviewUpdated: { reads: 'T.ReviewUpdated' },
  FeedbackListParams: { sends: 'T.FeedbackListParams' },
  FeedbackListResult: { reads: 'T.FeedbackListResult' },
  FeedbackCreateParams: { sends: 'T.FeedbackCreateParams' },
  FeedbackReplyParams: { sends: 'T.FeedbackReplyParams' },
  ThreadIdParams: { sends: 'T.ThreadIdParams' },
  ThreadResult: { reads: 'T.ThreadResult' },
  BufferChangedParams: { sends: 'T.BufferChangedParams' },
  FeedbackChanged: { reads: 'T.FeedbackChanged' },
  EventsReplayParams: { sends: 'T.EventsReplayParams' },
  EventsReplayResult: { reads: 'T.ReplayResult' },
  InboxParams: { sends: 'T.InboxParams' },
  InboxResult: { reads: 'T.InboxResult' },
  RoundGetParams: { sends: 'T.RoundGetParams' },
  RoundForReview: { reads: 'T.RoundDetail' },
  RoundCommentParams: { sends: 'T.RoundCommentParams' },
  RoundCommentResult: { reads: 'T.RoundCommentResult' },
  RoundUncommentParams: { sends: 'T.RoundUncommentParams' },
  RoundUncommentResult: { reads: 'T.RoundUncommentResult' },
  RoundSubmitParams: { sends: 'T.RoundSubmitParams' },
  RoundSubmitResult: { reads: 'T.SubmitResult' },
  WaitingRound: { reads: 'T.WaitingRound' },
  RoundChanged: { reads: 'T.RoundChanged' },
  ReviewRequestParams: { unused: 'the extension does not run review rounds itself' },
  ReviewRequestResult: { unused: 'the extension does not run review rounds itself' },
  ReviewAwaitParams: { unused: 'cli only' },
  ReviewCancelParams: { unused: 'cli only' },
  ReviewCancelResult: { unused: 'cli only' },
  PlanOpenParams: { unused: 'cli only: the hosts\' plan hooks' },
  PlanOpened: { unused: 'cli only: the hosts\' plan hooks' },
  PlanRoundParams: { unused: 'cli only: the hosts\' plan hooks' },
  PlanVerdict: { unused: 'cli only: the hosts\' plan hooks' },
  PlanAnswered: { unused: 'cli only: the hosts\' plan hooks' },
  PlanNotesParams: { unused: 'cli only: the hosts\' plan hooks' },
  PlanNotesResult: { unused: 'cli only: the hosts\' plan hooks' },
  ReviewProgress: { unused: 'sent only to the connection running a round' },
  SessionsListParams: { unused: 'the extension shows rounds through inbox and round/get' },
  SessionsGetParams: { unused: 'the extension shows rounds through inbox and round/get' },
  SessionsCompleteParams: { unused: 'the extension shows rounds through inbox and round/get' },
  SessionsResult: { unused: 'the extension shows rounds through inbox and round/get' },
  SubscribeParams: { unused: 'cli only' },
  SubscribeResult: { unused: 'cli only' },
  Status: { unused: 'parley status shows it' },
  ExportDocument: { unused: 'parley export and import' },
  ImportResult: { unused: 'parley export and import' },
  StoreFileParams: { unused: 'parley export and import' },
  ExportFileResult: { unused: 'parley export and import' },
  ShutdownParams: { unused: 'parley stop' },
  ShutdownResult: { unused: 'parley stop' },
  DaemonStopping: { unused: 'the extension reconnects however a connection ends' },
  AgentsListParams: { sends: 'T.AgentsListParams' },
  AgentsListResult: { reads: 'T.AgentsListResult' },
  AgentsChanged: { reads: 'T.AgentsChanged' },
  AgentAskParams: { sends: 'T.AgentAskParams' },
  AgentAskResult: { reads: 'T.AgentAskResult' },
  AgentResendParams: { sends: 'T.AgentResendParams' },
  AgentTypedParams: { sends: 'T.AgentTypedParams' },
  AgentTypedResult: { reads: 'T.AgentTypedResult' },
  MessagesTakeParams: { unused: 'host hooks call it, not editors' },
  MessagesTakeResult: { unused: 'host hooks call it, not editors' },
  WalkthroughActParams: { sends: 'T.WalkthroughActParams' },
  WalkthroughActResult: { reads: 'T.WalkthroughActResult' },
  WalkthroughResendParams: { unused: 'unused yet: a click waiting for an agent that has gone is sent on with parley walkthrough resend' },
  WalkthroughGetParams: { sends: 'T.WalkthroughGetParams' },
  WalkthroughGetResult: { reads: 'T.WalkthroughGetResult' },
  WalkthroughListParams: { unused: 'the window reads its workspace\'s latest walkthrough with walkthrough/get' },
  WalkthroughListResult: { unused: 'the window reads its workspace\'s latest walkthrough with walkthrough/get' },
  WalkthroughUpdated: { reads: 'T.WalkthroughUpdated' },
  DiagnosticsGetParams: { reads: 'T.DiagnosticsGetParams' },
  DiagnosticsGetResult: { sends: 'T.DiagnosticsGetResult' },
  SymbolsFindParams: { reads: 'T.SymbolsFindParams' },
  SymbolsFindResult: { sends: 'T.SymbolsFindResult' },
  PrLinkParams: { unused: 'parley pr link: a window shows the link once made (pr/status)' },
  PrStatusParams: { sends: 'T.PrStatusParams' },
  PrPullParams: { sends: 'T.PrPullParams' },
  PrPushParams: { sends: 'T.PrPushParams' },
  PrStatusResult: { reads: 'T.PrStatusResult' },
};

function snapshotNames(): string[] {
  return fs
    .readdirSync(path.join(snapshots, 'types'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

test('every wire type is said to be read, sent or unused by the extension', () => {
  const names = snapshotNames();
  assert.ok(names.length > 40, `found only ${names.length} snapshots in ${snapshots}`);
  const unsaid = names.filter((name) => !(name in USES));
  assert.deepEqual(unsaid, [], 'give each a TypeScript type in USES (test/unit/wireTypes.test.ts), or say why the extension does not use it');
  const stale = Object.keys(USES).filter((name) => !names.includes(name));
  assert.deepEqual(stale, [], 'these are no wire types any more: remove them from USES');
});

/** Type-checks `source`, which sits beside src/hub/types.ts, and returns its errors by line (0-based). */
function typeErrors(source: string): { line: number; message: string }[] {
  const file = path.join(extension, 'src/hub/__wire_snapshots__.ts');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    path.resolve(name) === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ({
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1,
    message: `${d.file ? path.basename(d.file.fileName) : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
  }));
}

test('src/hub/types.ts agrees with the snapshots of the Rust wire types', () => {
  const lines = [
    "import type * as T from './types';",
    '// Checks a value against T without excess-property checks: U keeps the fields T does not name.',
    'const fits = <T,>() => <U extends T>(u: U): U => u;',
  ];
  const owner: string[] = ['(imports)', '(fits)', '(fits)'];
  for (const name of snapshotNames()) {
    const use = USES[name];
    if (!use || 'unused' in use) continue;
    const value = JSON.parse(fs.readFileSync(path.join(snapshots, 'types', `${name}.json`), 'utf8'));
    if ('reads' in use) {
      // The snapshot, as a literal, must be a value of the type the extension reads it as.
      for (const line of `export const ${name}: ${use.reads} = ${JSON.stringify(value, null, 2)};`.split('\n')) {
        lines.push(line);
        owner.push(name);
      }
    } else {
      // What the extension sends may leave fields out, but must name only fields the Rust type has.
      const fields = Object.keys(value ?? {}).map((k) => JSON.stringify(k));
      const known = fields.length > 0 ? fields.join(' | ') : 'never';
      // An error here names the extra fields: "Type '["id"]' is not assignable to type '[never]'".
      lines.push(`export const ${name}_fields: [never] = [] as unknown as [Exclude<keyof NonNullable<${use.sends}>, ${known}>];`);
      // And the fields it has in common with the Rust type take the snapshot's values.
      const common = `Pick<NonNullable<${use.sends}>, Extract<keyof NonNullable<${use.sends}>, ${known}>>`;
      for (const line of `export const ${name}_values = fits<${common}>()(${JSON.stringify(value, null, 2)});`.split('\n')) {
        lines.push(line);
        owner.push(name);
      }
      owner.push(name);
    }
  }
  const problems = typeErrors(lines.join('\n')).map((e) => `${owner[e.line] ?? '?'}: ${e.message}`);
  assert.deepEqual(problems, [], `src/hub/types.ts disagrees with protocol/tests/snapshots/types:\n${problems.join('\n')}`);
});
