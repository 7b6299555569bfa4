"""The hidden layer of mlp.cml's forward_with: a torch nn.Module the test
installs (set_layer) and trains; Camel calls `hidden` through python://."""

_layer = None


def set_layer(layer):
    global _layer
    _layer = layer


def hidden(x):
    return _layer(x)
