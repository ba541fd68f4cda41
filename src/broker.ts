// `quorate/broker`: the reference broker for tests and embedding.
export {};
