import type { FailedTransactionMetadata } from "litesvm";

// litesvm's transaction errors in Solana's JSON form (`"BlockhashNotFound"`, `{"InstructionError":[0,{"Custom":1}]}`)
// and with the text Agave's RPC puts after "Transaction simulation failed: ".

/** A TransactionError as Solana's JSON-RPC serializes it. */
export type SolanaTransactionError = string | { [variant: string]: unknown };

// litesvm's TransactionErrorFieldless and InstructionErrorFieldless (const enums, so not importable), in order.
const TX_ERRORS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
];

const INSTRUCTION_ERRORS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
  "BorshIoError",
];

// Agave's Display texts for the common ones; others show their name.
const TX_TEXT: Record<string, string> = {
  AccountInUse: "Account in use",
  AccountLoadedTwice: "Account loaded twice",
  AccountNotFound: "Attempt to debit an account but found no record of a prior credit.",
  ProgramAccountNotFound: "Attempt to load a program that does not exist",
  InsufficientFundsForFee: "Insufficient funds for fee",
  InvalidAccountForFee: "This account may not be used to pay transaction fees",
  AlreadyProcessed: "This transaction has already been processed",
  BlockhashNotFound: "Blockhash not found",
  MissingSignatureForFee: "Transaction requires a fee but has no signature present",
  InvalidAccountIndex: "Transaction contains an invalid account reference",
  SignatureFailure: "Transaction did not pass signature verification",
  InvalidProgramForExecution: "This program may not be used for executing instructions",
  SanitizeFailure: "Transaction failed to sanitize accounts offsets correctly",
  UnsupportedVersion: "Transaction version is unsupported",
  AddressLookupTableNotFound: "Transaction loads an address table account that doesn't exist",
};
const IX_TEXT: Record<string, string> = {
  GenericError: "generic instruction error",
  InvalidArgument: "invalid program argument",
  InvalidInstructionData: "invalid instruction data",
  InvalidAccountData: "invalid account data for instruction",
  AccountDataTooSmall: "account data too small for instruction",
  InsufficientFunds: "insufficient funds for instruction",
  IncorrectProgramId: "incorrect program id for instruction",
  MissingRequiredSignature: "missing required signature for instruction",
  AccountAlreadyInitialized: "instruction requires an uninitialized account",
  UninitializedAccount: "instruction requires an initialized account",
  UnsupportedProgramId: "Unsupported program id",
  ComputationalBudgetExceeded: "Computational budget exceeded",
  PrivilegeEscalation: "Cross-program invocation with unauthorized signer or writable account",
  InvalidAccountOwner: "Invalid account owner",
  IllegalOwner: "Provided owner is not allowed",
};

type LiteSvmTxError = ReturnType<FailedTransactionMetadata["err"]>;
type LiteSvmIxError = number | { code?: number; msg?: string };

function instructionError(e: LiteSvmIxError): unknown {
  if (typeof e === "number") return INSTRUCTION_ERRORS[e] ?? `InstructionError${e}`;
  if (typeof e.code === "number") return { Custom: e.code };
  if (typeof e.msg === "string") return { BorshIoError: e.msg };
  return String(e);
}

/** litesvm's error of a failed transaction as Solana's JSON. */
export function transactionErrorJson(err: LiteSvmTxError): SolanaTransactionError {
  if (typeof err === "number") return TX_ERRORS[err] ?? `TransactionError${err}`;
  const name = err.constructor.name;
  const e = err as unknown as { index?: number; accountIndex?: number; err?: () => LiteSvmIxError };
  if (name === "TransactionErrorInstructionError") return { InstructionError: [e.index, instructionError(e.err!())] };
  if (name === "TransactionErrorDuplicateInstruction") return { DuplicateInstruction: e.index };
  if (name === "TransactionErrorInsufficientFundsForRent") return { InsufficientFundsForRent: { account_index: e.accountIndex } };
  if (name === "TransactionErrorProgramExecutionTemporarilyRestricted")
    return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } };
  return String(err);
}

/** The text of an error, as Agave's RPC shows it ("Error processing Instruction 0: custom program error: 0x1"). */
export function transactionErrorText(err: SolanaTransactionError): string {
  if (typeof err === "string") return TX_TEXT[err] ?? err;
  if ("InstructionError" in err) {
    const [index, ix] = err.InstructionError as [number, unknown];
    const text =
      typeof ix === "string"
        ? (IX_TEXT[ix] ?? ix)
        : ix && typeof ix === "object" && "Custom" in ix
          ? `custom program error: 0x${Number((ix as { Custom: number }).Custom).toString(16)}`
          : JSON.stringify(ix);
    return `Error processing Instruction ${index}: ${text}`;
  }
  if ("InsufficientFundsForRent" in err)
    return `Transaction results in an account (${(err.InsufficientFundsForRent as { account_index: number }).account_index}) with insufficient funds for rent`;
  return JSON.stringify(err);
}
