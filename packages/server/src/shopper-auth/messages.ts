/** A message to a shopper. Plain text only: codes must read well in any mail client and in logs. */
export interface Message {
  to: string;
  subject: string;
  text: string;
}

/** Delivers messages to shoppers: the staging mailbox, SMTP, or both. */
export interface MessageSender {
  send(message: Message): Promise<void>;
}

/**
 * Sends each message through every sender in turn, stopping at the first that fails (staging with
 * `SMTP_URL` set delivers, then keeps).
 */
export function allOf(senders: MessageSender[]): MessageSender {
  return {
    async send(message) {
      for (const sender of senders) await sender.send(message);
    },
  };
}
