/** A call the model makes, as exo's tool parser hands it over (ToolCallItem: id, name, arguments as JSON text); every dialect's route sends it in its own shape. */
export interface FakeToolCall {
  id: string;
  name: string;
  arguments: string;
}
