from .heads import CenterHead
