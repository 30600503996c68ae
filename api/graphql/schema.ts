import { buildSchema } from "graphql";

/** Every mutation's optional key (api/graphql/idempotency.ts). */
const KEY_ARG = `"REST's Idempotency-Key (docs/payments.md, Idempotency keys): a call with the same key and arguments gets the first outcome."
    idempotencyKey: String`;

/**
 * The merchant GraphQL API (served at `/api/graphql`, see api/routes/graphql.ts and docs/graphql.md).
 * Field names and JSON output are those of the REST API: a `Payment` is exactly an item of
 * `GET /v1/payments`, `Balance` the body of `GET /balance`, `PromoStatus` that of `GET /promo-status`.
 *
 * Numbers: Unix ms, block numbers and confirmations are `Float` (always integer-valued) because
 * GraphQL `Int` is 32-bit signed; a JSON number carries them exactly (up to 2^53), as in REST.
 * Amounts are decimal strings, never numbers.
 */
export const SDL = /* GraphQL */ `
  """
  Merchant queries. Every field needs the \`x-api-key\` header.
  """
  type Query {
    """
    GET /v1/payments: the merchant's payments, newest first, keyset-paginated.
    """
    payments(
      "1-100, default 100."
      limit: Int
      "The \`nextCursor\` of the previous page."
      cursor: String
      "One of the 13 payment statuses (pending, paid, completed, ...)."
      status: String
      "ISO 8601 date-time or Unix ms (as a string of digits); inclusive."
      createdAfter: String
      "ISO 8601 date-time or Unix ms (as a string of digits); inclusive."
      createdBefore: String
      "Exact merchant order id."
      orderId: String
    ): PaymentList
    """
    GET /v1/payments/{paymentId}: one of the merchant's payments, exactly as an item of \`payments\`. Error NOT_FOUND
    \`Payment not found\` for an unknown, malformed or another merchant's id.
    """
    payment(paymentId: String!): Payment
    """
    GET /balance: the Gas Tank (USDT, 6 decimals) and where to fund it.
    """
    balance: Balance
    """
    GET /promo-status: the free-transactions promotion.
    """
    promoStatus: PromoStatus
    """
    GET /vault/v1/config: the vault of the request's API key (one vault per key; another key of the same
    merchant sees its own vault or none). Error NOT_FOUND \`Vault not configured\` when the key has none.
    """
    vaultConfig: VaultConfiguration
    """
    GET /vault/v1/users: a user of the request's key's vault (its latest deposit address, on \`chainId\` when given) and
    what the user deposited in \`tokenAddress\` (default: the token of the latest POST /vault/v1/users).
    """
    vaultUser(externalUserId: String!, chainId: Int, tokenAddress: String): VaultUserInfo
    """
    GET /vault/v1/deposits: the vault's deposits, newest first; \`total\` counts every match.
    """
    vaultDeposits(
      "1-100, default 50."
      limit: Int
      "detected, processing, completed or failed."
      status: String
      externalUserId: String
    ): VaultDepositList
  }

  type Mutation {
    """
    POST /payments: a payment link. Same checks, order and messages as REST.
    """
    createPayment(input: CreatePaymentInput!, ${KEY_ARG}): CreatedPayment
    """
    POST /v1/payments/{paymentId}/withdraw: manual withdraw of a partial payment.
    """
    withdrawPayment(paymentId: String!, ${KEY_ARG}): WithdrawResult
    """
    POST /v1/payments/{paymentId}/cancel: a pending payment that received nothing becomes cancelled (final).
    """
    cancelPayment(paymentId: String!, ${KEY_ARG}): CancelResult
    """
    POST /v1/payments/{paymentId}/recover: sweeps unexpected funds of one token (the zero address: the
    native coin) from the payment's address to its committed payout, with no fee.
    """
    recoverFunds(paymentId: String!, token: String!, ${KEY_ARG}): FundRecovery
  }

  """
  The body of POST /payments.
  """
  input CreatePaymentInput {
    "EVM address that receives the funds."
    merchant: String!
    "Network id as a string, e.g. \\"137\\"."
    chainId: String!
    "Token contract address; the zero address for a native coin."
    token: String!
    "Human-readable decimal, e.g. \\"12.5\\"."
    amount: String!
    "Max 100 characters."
    orderId: String!
    "Max 200 characters."
    description: String
    "http(s) URL, max 2000 characters."
    redirectUrl: String
    "Unix ms, integer, in the future. Default: 24 hours after creation."
    expiresAt: Float
    "1-100, default 1."
    blockConfirmations: Int
    gasless: Boolean
    payerCoversFee: Boolean
    "Positive decimal string, at most 18 fraction digits."
    customPriceUsd: String
  }

  type CreatedPayment {
    "{app_url}/pay/{paymentId}"
    url: String!
    paymentId: String!
    "Unix ms."
    expiresAt: Float!
    "What the payer is asked to send: the amount, plus the fees in payer-covers-fee mode (decimal string)."
    amountDue: String!
  }

  type WithdrawResult {
    paymentId: String!
    "Always \`withdraw_request\` (the payment's status until the settler signs the sweep, then \`withdrawing\`)."
    status: String!
    receivedAmount: String!
  }

  type CancelResult {
    paymentId: String!
    "Always \`cancelled\`."
    status: String!
  }

  type FundRecovery {
    recoveryId: String!
    paymentId: String!
    "Token contract; the zero address for the native coin."
    token: String!
    "requested, signed, sent, mined, recovered or failed."
    status: String!
    "What was on the address when asked (decimal string); null when the token's decimals are unknown."
    amount: String
    "The same in smallest units."
    units: String!
    "Where the sweep pays: the payout address the deposit address commits to."
    payout: String!
  }

  type PaymentList {
    data: [Payment!]!
    nextCursor: String
    hasMore: Boolean!
  }

  """
  An item of GET /v1/payments (and the \`data\` of GET /v1/payments/{paymentId}).
  """
  type Payment {
    paymentId: String!
    orderId: String!
    description: String
    status: String!
    "Unix ms."
    createdAt: Float!
    "Unix ms."
    completedAt: Float
    "Unix ms."
    expiresAt: Float!
    chainId: String!
    token: Token!
    amount: String!
    receivedAmount: String!
    merchant: String!
    recipientAddress: String!
    transaction: Transaction
    settlementTransactionHash: String
    fees: Fees!
    gasless: Boolean!
    payerCoversFee: Boolean!
    blockConfirmations: Int!
    terminal: Terminal
    "indexer, trusted_oracle, custom or stablecoin."
    priceSource: String!
    """
    Extension: funds on the payment's address that the payment itself will not move (another token, or
    anything left once the payment is final), recoverable to the payout with \`recoverFunds\`. Empty when none.
    """
    unexpectedFunds: [UnexpectedFunds!]!
    "Extension: the cross-chain order the payer placed (the latest), or null (docs/bridge.md)."
    bridge: BridgeRef
  }

  type BridgeRef {
    "The bridge's order id (lowercase hex)."
    orderId: String!
    srcChainId: Int!
    "Token the payer gave on the source chain."
    srcToken: String!
    "quoted, created, fulfilled, claimed_unlock, cancel_sent, cancelled or failed."
    status: String!
    "Once the order is being cancelled: what the payer gets back on the source (may be another token than sent)."
    refund: BridgeRefund
  }

  type BridgeRefund {
    "Token the refund is paid in (a pre-swapped input is refunded in the reserve asset, usually USDC)."
    token: String!
    symbol: String!
    "Decimal amount."
    amount: String!
    "The cancel's beneficiary (the payer)."
    to: String
  }

  type UnexpectedFunds {
    "Token contract (checksummed); the zero address for the native coin."
    token: String!
    symbol: String
    decimals: Int
    "Decimal string; null when the token's decimals are unknown."
    amount: String
    "Smallest units, as a string."
    units: String!
    "Something is left and no recovery of it is in flight."
    recoverable: Boolean!
    "The latest recovery of this token, if any."
    recovery: Recovery
  }

  type Recovery {
    recoveryId: String!
    "requested, signed, sent, mined, recovered or failed."
    status: String!
    transactionHash: String
    "What the payout received, once recovered (decimal string)."
    recoveredAmount: String
    recoveredUnits: String
    "The fee the sweep paid out of the funds (smallest units), once signed (docs/unexpected-funds.md)."
    feeUnits: String
    "The fee debited from the Gas Tank instead (USDT), once signed."
    gasTankFee: String
    error: String
    "Unix ms."
    requestedAt: Float!
  }

  type Token {
    "The zero address for a native coin."
    address: String!
    symbol: String!
    decimals: Int!
  }

  type Transaction {
    hash: String!
    "Integer."
    blockNumber: Float
    "Integer."
    confirmations: Float!
  }

  type Fees {
    platformFee: String!
    gasFee: String!
    processingFee: String!
    totalFee: String!
    feePercentage: Float!
    "Extension: the referring agent's markup, inside totalFee (docs/agents.md)."
    agentFee: String!
  }

  type Terminal {
    terminalId: String!
    code: String!
    name: String!
  }

  type Balance {
    "USDT with 6 decimals, e.g. \\"5.000000\\"."
    balance: String!
    depositAddresses: [DepositAddress!]!
  }

  type DepositAddress {
    chainId: Int!
    address: String!
    tokens: [GasTankToken!]!
  }

  type GasTankToken {
    symbol: String!
    address: String!
  }

  """
  The Vault configuration (the \`data\` of GET /vault/v1/config).
  """
  type VaultConfiguration {
    "Public, URL-safe id (GET /vault/v1/business/{publicId}/tokens)."
    publicId: String!
    businessName: String!
    "Checksummed EVM address sweeps pay to."
    walletAddress: String!
    "Fee in basis points (25 = 0.25%; 0-100, set by the operator for a registered business)."
    feeBps: Int!
    isActive: Boolean!
    enabledTokens: [VaultEnabledToken!]!
  }

  """
  The \`data\` of GET /vault/v1/users. Amounts in smallest token units.
  """
  type VaultUserInfo {
    externalUserId: String!
    depositAddress: String!
    chainId: Int!
    tokenSymbol: String!
    totalDeposited: String!
    depositCount: Int!
    "Unix ms; null before the first deposit."
    lastDepositAt: Float
    "The token the totals count (checksummed)."
    tokenAddress: String!
  }

  type VaultDepositList {
    deposits: [VaultDeposit!]!
    total: Int!
  }

  """
  An item of GET /vault/v1/deposits. Amounts in smallest token units; times in Unix ms.
  """
  type VaultDeposit {
    depositId: String!
    externalUserId: String!
    amount: String!
    fee: String!
    netAmount: String!
    chainId: Int!
    tokenSymbol: String!
    "detected, processing, completed or failed."
    status: String!
    "Null for a deposit recorded from the address's balance (no transfer indexed)."
    depositTxHash: String
    processTxHash: String
    createdAt: Float!
    processedAt: Float
    tokenAddress: String!
    depositAddress: String!
    "Why a detected deposit waits: below_minimum or token_not_enabled; null otherwise."
    hold: String
  }

  type VaultEnabledToken {
    chainId: Int!
    "At most 20 characters."
    tokenSymbol: String!
    "Checksummed ERC-20 contract."
    tokenAddress: String!
  }

  type PromoStatus {
    freeTransactions: FreeTransactions!
  }

  type FreeTransactions {
    eligible: Boolean!
    used: Int!
    remaining: Int!
  }
`;

export const schema = buildSchema(SDL);
